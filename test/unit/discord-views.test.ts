/**
 * The Discord drawing of a view, without Discord: custom ids (what a click carries back) and the
 * message a view becomes, against Discord's limits. The e2e test (test/e2e/discord-views.test.ts)
 * clicks real buttons against the fake Discord, which refuses what Discord refuses.
 */
import { describe, expect, it } from "vitest";
import type { TeamView, ViewButton, ViewGroup, ViewItem, ViewSection } from "../../src/ground/view-model.ts";
import { answerId, pageId, parseCustomId, runId, type ViewState } from "../../src/platforms/discord/views/ids.ts";
import { PAGE_SIZES, viewMessage, type ViewMessage } from "../../src/platforms/discord/views/message.ts";
import { inputModal, submittedText, TEXT_FIELD } from "../../src/platforms/discord/views/modal.ts";
import { embedChars } from "../../src/platforms/discord/rich.ts";

const state = (pane: ViewState["pane"], pages: Record<string, number> = {}): ViewState => ({ pane, pages });

describe("Discord view custom ids", () => {
  it("reads back what it writes: a page, a command, a step, a modal, a next step", () => {
    const at = state("team", { rules: 2, proposals: 1 });
    const page = pageId(at)!;
    expect(page).toBe("cairn:v:team:proposals=1,rules=2");
    expect(parseCustomId(page)).toEqual({ kind: "page", state: at });
    const forget = runId("run", at, { name: "forget", args: ["cm1abc"] })!;
    expect(forget).toBe("cairn:c:team:proposals=1,rules=2:forget cm1abc");
    expect(parseCustomId(forget)).toEqual({ kind: "run", state: at, call: { name: "forget", args: ["cm1abc"] } });
    expect(parseCustomId(runId("step", state("me"), { name: "forget", args: ["me"] }))).toEqual({ kind: "step", state: state("me"), call: { name: "forget", args: ["me"] } });
    expect(parseCustomId(runId("ask", state("team"), { name: "persona", args: ["set"] }))).toMatchObject({ kind: "ask", call: { name: "persona", args: ["set"] } });
    expect(parseCustomId(runId("submit", state("team"), { name: "persona", args: ["set"] }))).toMatchObject({ kind: "submit", call: { name: "persona", args: ["set"] } });
    expect(parseCustomId(answerId({ name: "forget", args: ["me", "confirm"] }))).toEqual({ kind: "answer", call: { name: "forget", args: ["me", "confirm"] } });
    // First pages are left out: one state, one id.
    expect(pageId(state("skills", { skills: 0 }))).toBe("cairn:v:skills:");
  });

  it("never makes an id over 100 characters, nor one whose command would read back otherwise", () => {
    const long = "a".repeat(64);
    expect(runId("run", state("skills", { skills: 12 }), { name: "archive", args: [long] })).toHaveLength("cairn:c:skills:skills=12:archive ".length + 64);
    expect(runId("run", state("team", { "channel-lessons": 9999, "team-memory": 9999, proposals: 9999 }), { name: "archive", args: [long] })).toBeNull();
    expect(runId("run", state("me"), { name: "forget", args: ["two words"] })).toBeNull();
  });

  it("reads nothing from an id cairn did not make or one tampered with", () => {
    for (const id of [
      "",
      "weather:now",
      "cairn:z:me:",
      "cairn:v:home:",
      "cairn:v:me:profile=x",
      "cairn:v:me::forget x",
      "cairn:c:me::dance now",
      "cairn:c:me::",
      "cairn:x:",
      `cairn:c:me::forget ${"x".repeat(100)}`,
      42,
      null,
    ]) {
      expect(parseCustomId(id), String(id)).toBeNull();
    }
  });
});

const button = (label: string, command: ViewButton["command"], args: string[], extra: Partial<ViewButton> = {}): ViewButton => ({ label, command, args, ...extra });
const items = (prefix: string, n: number, chars: number, buttons: (id: string) => ViewButton[]): ViewItem[] =>
  Array.from({ length: n }, (_, i) => {
    const id = `${prefix}${String(i).padStart(22, "0")}`;
    return { id, markdown: `${prefix} item ${i}: ${"lorem ipsum ".repeat(Math.ceil(chars / 12)).slice(0, chars)}`, buttons: buttons(id) };
  });
const group = (id: string, title: string, all: ViewItem[], page: number, size: number): ViewGroup => ({
  id,
  title,
  items: all.slice(page * size, (page + 1) * size),
  total: all.length,
  page,
  pages: Math.max(1, Math.ceil(all.length / size)),
  empty: `Nothing in ${title}.`,
});

/** The team pane at its fullest: an admin, every group on a middle page of full pages, long texts. */
function fullTeam(page: number): TeamView {
  const size = PAGE_SIZES.team;
  const section: ViewSection = {
    id: "team",
    title: "Team",
    lines: [`**How cairn works here** (set by admins): ${"Be brief. ".repeat(150)}`],
    buttons: [button("Edit persona", "persona", ["set"], { input: { title: "Team persona", label: "How cairn speaks here", initial: "x", maxLength: 1500, multiline: true } })],
    groups: [
      group("proposals", "Waiting for approval", items("p", 40, 500, (id) => [button("Approve", "approve", [id], { style: "primary" }), button("Reject", "reject", [id], { style: "danger" })]), page, size),
      group("rules", "Team rules", items("r", 40, 500, (id) => [button("Archive", "forget", [id], { style: "danger" })]), page, size),
      group("channel-lessons", "Lessons of your channels", items("l", 40, 500, (id) => [button("Archive", "forget", [id], { style: "danger" })]), page, size),
      group("team-memory", "Team memory", items("m", 40, 500, () => []), page, size),
    ],
  };
  return { pane: "team", admin: true, sections: [section] };
}

/** Every limit Discord checks on a message of embeds and buttons. */
function expectWithinLimits(message: ViewMessage): void {
  expect(message.embeds.length).toBeLessThanOrEqual(10);
  expect(embedChars(message.embeds)).toBeLessThanOrEqual(6000);
  for (const e of message.embeds) {
    expect((e.title ?? "").length).toBeLessThanOrEqual(256);
    expect((e.description ?? "").length).toBeLessThanOrEqual(4096);
  }
  expect(message.components.length).toBeLessThanOrEqual(5);
  const buttons = message.components.flatMap((row) => {
    expect(row.components.length).toBeGreaterThan(0);
    expect(row.components.length).toBeLessThanOrEqual(5);
    return row.components;
  });
  for (const b of buttons) {
    expect(b.label!.length).toBeLessThanOrEqual(80);
    expect(b.custom_id.length).toBeLessThanOrEqual(100);
  }
  expect(new Set(buttons.map((b) => b.custom_id)).size).toBe(buttons.length);
}

const labels = (message: ViewMessage): string[] => message.components.flatMap((row) => row.components.map((b) => b.label ?? ""));

describe("a view as a Discord message", () => {
  it("fits the team pane at its fullest: 25 buttons, every item numbered, long texts shortened", () => {
    const message = viewMessage(fullTeam(1), state("team", { proposals: 1, rules: 1, "channel-lessons": 1, "team-memory": 1 }));
    expectWithinLimits(message);
    expect(labels(message)).toHaveLength(25);
    // Items numbered through the message; buttons say which item they act on.
    expect(labels(message).slice(0, 4)).toEqual(["Approve 1", "Reject 1", "Approve 2", "Reject 2"]);
    expect(labels(message)).toContain("Archive 12");
    expect(labels(message)).toContain("Edit persona");
    expect(labels(message)).toContain("◀ Team rules: page 1");
    expect(labels(message)).toContain("Team rules: page 3 ▶");
    const text = message.embeds.map((e) => e.description ?? "").join("\n");
    for (let n = 1; n <= 16; n++) expect(text).toContain(`**${n}.** `);
    expect(message.embeds.map((e) => e.title)).toContain("Team rules · page 2 of 10 (40 in all)");
    // Nothing had to be typed instead.
    expect(text).not.toContain("`/cairn");
  });

  it("keeps navigation when buttons run out, and shows the left-out buttons' commands to type", () => {
    const view = fullTeam(1);
    // Three buttons a proposal: more than a page's share of the 25.
    const proposals = view.sections[0]!.groups[0]!;
    for (const item of proposals.items) item.buttons.push(button("History", "history", [item.id]));
    const message = viewMessage(view, state("team", { proposals: 1, rules: 1, "channel-lessons": 1, "team-memory": 1 }));
    expectWithinLimits(message);
    expect(labels(message)).toHaveLength(25);
    expect(labels(message).filter((l) => l.endsWith("▶") || l.startsWith("◀"))).toHaveLength(8);
    expect(labels(message)).toContain("Edit persona");
    // The last items' buttons are the ones left out: the lessons' (items 9 to 12 of this page).
    expect(labels(message)).toContain("Archive 8");
    expect(labels(message)).not.toContain("Archive 9");
    const text = message.embeds.map((e) => e.description ?? "").join("\n");
    expect(text).toMatch(/\*\*9\.\*\* l item 4: .*· Archive: `\/cairn forget l0+4`/);
  });

  it("draws a skill whose id would be too long as a command to type", () => {
    const long = `s${"k".repeat(63)}`;
    const all = items("s", 25, 80, () => []);
    all[0] = { id: "x", markdown: `\`${long}\` (active)`, buttons: [button("Pin", "pin", [long]), button("Archive", "archive", [long], { style: "danger" })] };
    const view: TeamView = { pane: "skills", admin: true, sections: [{ id: "skills", title: "Skills", lines: [], buttons: [], groups: [group("skills", "Skills", all, 0, 10)] }] };
    // At page 1000 the page state makes the id longer than 100.
    const message = viewMessage(view, state("skills", { skills: 1000, "some-other-group-id": 1000 }));
    expectWithinLimits(message);
    expect(labels(message)).not.toContain("Pin 1");
    expect(message.embeds[0]!.description).toContain(`Pin: \`/cairn pin ${long}\` · Archive: \`/cairn archive ${long}\``);
  });

  it("opens a modal with the current text and reads back only its text field", () => {
    const input = { title: "Team persona", label: "How cairn speaks here, and what it must always do", initial: "Be brief.", maxLength: 1500, multiline: true };
    expect(inputModal("cairn:m:team::persona set", input)).toEqual({
      custom_id: "cairn:m:team::persona set",
      title: "Team persona",
      // Discord's labels hold 45 characters: a longer one is said in full in the label's description.
      components: [
        {
          type: 18,
          label: "How cairn speaks here, and what it must…",
          description: "How cairn speaks here, and what it must always do",
          component: { type: 4, custom_id: TEXT_FIELD, style: 2, max_length: 1500, required: true, value: "Be brief." },
        },
      ],
    });
    expect(inputModal("id", { ...input, initial: "x".repeat(4001) })).toBeNull();
    expect(submittedText([{ customId: TEXT_FIELD, value: "Say hi.", type: 4 }])).toBe("Say hi.");
    expect(submittedText([{ customId: "other", value: "x" }])).toBeNull();
    expect(submittedText([{ customId: TEXT_FIELD, value: "x".repeat(4001) }])).toBeNull();
    expect(submittedText("nonsense")).toBeNull();
  });
});
