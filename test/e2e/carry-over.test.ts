/**
 * Working memory between sessions (src/turn/carry-over.ts): a conversation's new session after the
 * idle timeout starts with a note of the session before it in its frozen snapshot; another
 * conversation's sessions never see it, and `/new` (a clean slate) carries nothing over. On SQLite and PostgreSQL, through the real Core.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { systemText } from "../fakes/anthropic.ts";

const HOUR = 60 * 60 * 1000;

forEachDatabase("working memory between sessions", (getDb) => {
  let clock = Date.parse("2026-06-01T09:00:00Z");
  const h = coreHarness(getDb, { settings: { sessionIdleMs: HOUR, bundledSkillsDir: null }, now: () => new Date(clock) });

  const say = async (where: PlaceOptions, text: string) => {
    const before = h.fake.requests.length;
    const r = await h.core.handle(inboundFor(where, text, uniqueId("m"), new Date(clock)));
    if (r.kind !== "reply" || r.reply.status !== "ok") throw new Error(`not answered: ${JSON.stringify(r)}`);
    return systemText(h.fake.requests.slice(before)[0]!);
  };

  it("starts a conversation's next session after the idle timeout with a note of the last one, never another conversation's, and none after /new", async () => {
    const thread: PlaceOptions = { workspace: h.ws, user: "UALICE", name: "Alice", channel: "C-eng", isDm: false, thread: uniqueId("th") };
    const elsewhere: PlaceOptions = { ...thread, channel: "C-other", thread: uniqueId("th") };
    // A message that teaches a lesson: memory shows the lesson where it applies, the note never quotes it.
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "channel", kind: "lesson", content: "Schema changes need a ticket in #dba first" }] } }] }, { text: "Saved." });
    await say(thread, "No: schema changes need a ticket in #dba first");
    h.fake.setDefault({ text: "Noted: the orders table moves to the new cluster first." });
    const first = await say(thread, "we're migrating the orders database to the new Postgres cluster this week");
    expect(first).not.toContain("LAST SESSION");
    clock += 2 * HOUR;
    // A new session (idle): the note carries what was being worked on, who said it, and cairn's answer.
    const second = await say(thread, "where were we?");
    expect(second).toContain("LAST SESSION IN THIS CONVERSATION");
    expect(second).toContain("Alice: we're migrating the orders database to the new Postgres cluster this week");
    expect(second).toContain("cairn: Noted: the orders table moves to the new cluster first.");
    expect(second).not.toContain("No: schema changes need a ticket");
    // Frozen with the session: its next turn's system prompt is the same text (the cache holds).
    expect(await say(thread, "and after that?")).toBe(second);
    // Another conversation's new session sees nothing of it.
    const other = await say(elsewhere, "hello there");
    expect(other).not.toContain("LAST SESSION");
    expect(other).not.toContain("orders database");
    // `/new` asks for a clean slate: the next session carries nothing over.
    await h.core.endSession(inboundFor(thread, "/new"), "request");
    const third = await say(thread, "let's start over");
    expect(third).not.toContain("LAST SESSION");
    expect(third).not.toContain("where were we?");
  });
  it("reads a new session's snapshot after the turn still under way in its conversation: what that turn saved and answered is in it", async () => {
    const thread: PlaceOptions = { workspace: h.ws, user: "UBOB", name: "Bob", channel: "C-ops", isDm: false, thread: uniqueId("th") };
    h.fake.setDefault({ text: "Hi." });
    await say(thread, "hello");
    clock += 10 * 60 * 1000;
    // The session's last turn is slow, and saves a channel fact before it answers.
    h.fake.enqueue(
      { delayMs: 400, then: { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "channel", content: "The orders database moves to cluster B" }] } }] } },
      { text: "Saved: the orders database moves to cluster B." },
    );
    const before = h.fake.requests.length;
    const slow = h.core.handle(inboundFor(thread, "remember: the orders database moves to cluster B", uniqueId("m"), new Date(clock)));
    while (h.fake.requests.length === before) await new Promise((r) => setTimeout(r, 5));
    // Meanwhile the idle timeout passes and the next message starts a new session.
    clock += 2 * HOUR;
    const next = h.core.handle(inboundFor(thread, "what is moving?", uniqueId("m"), new Date(clock)));
    expect((await slow).kind).toBe("reply");
    expect((await next).kind).toBe("reply");
    const asked = h.fake.requests.find((r) => JSON.stringify(r.body.messages).includes("what is moving?"))!;
    const system = systemText(asked);
    expect(system).toContain("LAST SESSION IN THIS CONVERSATION");
    expect(system).toContain("The orders database moves to cluster B");
    expect(system).toContain("cairn: Saved: the orders database moves to cluster B.");
  });
});
