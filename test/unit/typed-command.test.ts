/** Which lines are a command typed without its slash (ground/typed-command.ts), and which are chat. */
import { describe, expect, it } from "vitest";
import { didYouMean, typedCommand } from "../../src/ground/typed-command.ts";

describe("typedCommand", () => {
  it("reads the full forms of a command, with a leading cairn or slash and a final full stop", () => {
    expect(typedCommand("forget me confirm")).toEqual({ call: { name: "forget", args: ["me", "confirm"] }, changes: true });
    expect(typedCommand("  Forget me confirm anonymous. ")).toEqual({ call: { name: "forget", args: ["me", "confirm", "anonymous"] }, changes: true });
    expect(typedCommand("/cairn forget me")?.call).toEqual({ name: "forget", args: ["me"] });
    expect(typedCommand("cairn: approve cm1a2b")).toEqual({ call: { name: "approve", args: ["cm1a2b"] }, changes: true });
    expect(typedCommand("history deploy-runbook")).toEqual({ call: { name: "history", args: ["deploy-runbook"] }, changes: false });
    expect(typedCommand("skills")).toEqual({ call: { name: "skills", args: [] }, changes: false });
    expect(typedCommand("jobs run curator --dry-run")?.changes).toBe(true);
  });

  it("leaves chat alone: sentences that start with a command word, bare reply words, ids without a digit or too short", () => {
    for (const chat of ["forget about it, the deploy is fine", "forget me not", "me", "why", "why?", "new", "confirm", "learn", "help me", "restore backups", "approve it", "rollback 12345", "approve abcdefgh", "", "cairn"]) {
      expect(typedCommand(chat), chat).toBeNull();
    }
  });

  it("points to the platform's own syntax", () => {
    const call = { name: "forget", args: ["me", "confirm"] } as const;
    expect(didYouMean("console", call)).toContain("`/forget me confirm`");
    expect(didYouMean("discord", call)).toContain("`/cairn forget me confirm`");
    expect(didYouMean("slack", call)).toContain("Slack runs no command in one");
  });
});
