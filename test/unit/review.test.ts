/** The review's pure parts: the notice the person gets, the prompt's place, what counts as a write. */
import { describe, expect, it } from "vitest";
import { reviewNotice, pendingIds, type ReviewReport } from "../../src/learning/review-notice.ts";
import { memoryReviewPrompt, skillReviewPrompt, withReviewPrompt, NOTHING_TO_SAVE } from "../../src/learning/review-prompt.ts";
import { plannedWrites, ReviewLedger } from "../../src/learning/review-tools.ts";
import type { ToolWrite } from "../../src/tools/registry.ts";

const fact = (text: string, pendingId: string | null = null, target: "user" | "team" = "user"): ToolWrite => ({ kind: "memory", action: "add", target, entryKind: "fact", text, pendingId });
const report = (writes: ToolWrite[], proposals: ReviewReport["proposals"] = []): ReviewReport => ({ writes, proposals });

describe("reviewNotice", () => {
  it("says nothing when nothing changed, or when notices are off", () => {
    expect(reviewNotice("brief", report([]), "Ann")).toBeNull();
    expect(reviewNotice("verbose", report([]), "Ann")).toBeNull();
    expect(reviewNotice("off", report([fact("a")]), "Ann")).toBeNull();
  });

  it("counts what was saved in a line or two", () => {
    const writes: ToolWrite[] = [
      fact("a"),
      fact("b"),
      { kind: "memory", action: "add", target: "user", entryKind: "lesson", text: "c", pendingId: null },
      { kind: "memory", action: "replace", target: "channel", entryKind: "fact", text: "d", pendingId: null },
      { kind: "skill", action: "patch", name: "deploy-web" },
      { kind: "skill", action: "write_file", name: "deploy-web" },
      { kind: "skill", action: "create", name: "triage" },
    ];
    expect(reviewNotice("brief", report(writes), "Ann")).toBe("Saved to memory: 2 facts, 1 lesson, 1 update.\nCreated skill triage.\nUpdated skill deploy-web.");
  });

  it("says what waits for the person's ✅ and how else to confirm it", () => {
    const writes: ToolWrite[] = [fact("a", "e1", "team"), { kind: "memory", action: "remove", target: "user", entryKind: "fact", text: "", pendingId: "e2" }];
    expect(reviewNotice("brief", report(writes), "Ann")).toBe("**Ann**, 1 team fact and 1 removal are waiting for your ✅ on this message (or `/cairn confirm e1 e2`).");
    expect(pendingIds(report(writes))).toEqual(["e1", "e2"]);
  });

  it("reports a refused team skill change as a suggestion, even when nothing was written", () => {
    expect(reviewNotice("brief", report([], [{ name: "deploy-web", action: "patch" }]), "Ann")).toBe(
      "Suggested a change to team skill `deploy-web`: not applied, since team skills change only when someone asks me to.",
    );
  });

  it("lists every write when verbose", () => {
    const writes: ToolWrite[] = [fact("Ann likes tables"), fact("Deploys on Tuesdays", "e1", "team"), { kind: "skill", action: "write_file", name: "deploy-web" }];
    expect(reviewNotice("verbose", report(writes), "Ann")).toBe(
      [
        "After reviewing this conversation I saved:",
        '- user memory: added "Ann likes tables"',
        '- team memory, waiting for your ✅ (id e1): added "Deploys on Tuesdays"',
        "- skill `deploy-web`: write file",
        "**Ann**, 1 team fact is waiting for your ✅ on this message (or `/cairn confirm e1`).",
      ].join("\n"),
    );
  });
});

describe("the review prompt", () => {
  it("comes after the conversation as the last user message", () => {
    const turns = [
      { role: "user" as const, content: [{ type: "text" as const, text: "hi" }] },
      { role: "assistant" as const, content: [{ type: "text" as const, text: "hello" }] },
    ];
    expect(withReviewPrompt(turns, "REVIEW").at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "REVIEW" }] });
    expect(withReviewPrompt(turns.slice(0, 1), "REVIEW")).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "REVIEW" }] }]);
  });

  it("asks for the person's preferences, or for skill corrections, with the cap and 'nothing to save' as the usual outcome", () => {
    const memory = memoryReviewPrompt({ name: "Ann", isDm: true, maxWrites: 3 });
    expect(memory).toContain("how they want to be answered");
    expect(memory).toContain("at most 3 writes");
    expect(memory).toContain(NOTHING_TO_SAVE);
    expect(memory).not.toContain("channel this channel");
    const skills = skillReviewPrompt({ name: "Ann", isDm: false, maxWrites: 2, skillsRead: ["deploy-web"] });
    expect(skills).toContain("A correction is a first-class signal");
    expect(skills).toContain("this conversation read: deploy-web");
    expect(skills).toContain("scope 'channel'");
    expect(skills).toContain(NOTHING_TO_SAVE);
  });
});

describe("the review's write cap", () => {
  it("counts memory operations and skill_manage calls, not reads", () => {
    expect(plannedWrites("memory", { operations: [{}, {}] })).toBe(2);
    expect(plannedWrites("skill_manage", { action: "patch", name: "x" })).toBe(1);
    expect(plannedWrites("skill_view", { name: "x" })).toBe(0);
    expect(plannedWrites("skills_list", {})).toBe(0);
  });

  it("counts writes and suggestions against the cap", () => {
    const ledger = new ReviewLedger(3);
    ledger.record(fact("a"));
    ledger.record(fact("b", "e1", "team"));
    ledger.proposals.push({ name: "deploy-web", action: "patch" });
    expect([ledger.used, ledger.left, ledger.pending]).toEqual([3, 0, 1]);
  });
});
