/**
 * A conversation's first session (agent/session-store.ts `unended`): in a conversation this process
 * created for a person's message, nothing was said before its first session, so that session has no
 * previous one to carry over and its first message skips the open-correction look-up (intake.ts).
 * Once a session ends, or for a conversation created for cairn's own post, the store reads as usual.
 */
import { expect, it } from "vitest";
import { SessionManager } from "../../src/agent/sessions.ts";
import { SessionStore } from "../../src/agent/session-store.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

const IDLE_MS = 60 * 60 * 1000;

forEachDatabase("a conversation's first session", (getDb) => {
  function setUp() {
    const db = getDb();
    const sessions = new SessionManager(new SessionStore(db), IDLE_MS);
    const created: { id: string; byMessage: boolean }[] = [];
    const history = new HistoryStore(db, (id, byMessage) => {
      created.push({ id, byMessage });
      sessions.noneOpen(id, byMessage);
    });
    return { db, sessions, history, created };
  }

  it("knows a conversation created for a person's message is in its first session until that session ends", async () => {
    const t = setUp();
    const o = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const scope = scopeOf(await t.history.resolve(inboundFor(o, "hello")));
    expect(t.created).toEqual([{ id: scope.conversationId, byMessage: true }]);
    const t0 = new Date(Date.UTC(2026, 5, 1, 9));
    const first = await t.sessions.current(scope, t0);
    expect(first.isNew).toBe(true);
    expect(t.sessions.inFirstSession(scope)).toBe(true);
    expect(await t.sessions.previous(scope, first.session.id)).toBeNull();

    // Idle past the timeout: the first session ends, the second has it as its previous one.
    const later = await t.sessions.current(scope, new Date(t0.getTime() + IDLE_MS + 1));
    expect(later.isNew).toBe(true);
    expect(t.sessions.inFirstSession(scope)).toBe(false);
    expect((await t.sessions.previous(scope, later.session.id))?.id).toBe(first.session.id);

    // `/new` ends a first session too.
    const other = scopeOf(await t.history.resolve(inboundFor({ ...o, channel: "C2" }, "hi")));
    await t.sessions.current(other, t0);
    expect(t.sessions.inFirstSession(other)).toBe(true);
    await t.sessions.end(other, "request", t0);
    expect(t.sessions.inFirstSession(other)).toBe(false);
  });

  it("is unsure (reads as usual) for a conversation it found, one created for a post, and after the cache is dropped", async () => {
    const t = setUp();
    const o = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const scope = scopeOf(await t.history.resolve(inboundFor(o, "hello")));
    // Another process (a fresh store) finds the conversation: it cannot know what was said in it.
    const replica = new SessionManager(new SessionStore(t.db), IDLE_MS);
    await replica.current(scope, new Date());
    expect(replica.inFirstSession(scope)).toBe(false);

    const posted = await t.history.placeOfPost("slack", o.workspace, "C-POSTS", null, null);
    expect(t.created.at(-1)).toEqual({ id: posted.id, byMessage: false });
    expect(t.sessions.inFirstSession({ ...scope, conversationId: posted.id })).toBe(false);

    await t.sessions.current(scope, new Date());
    expect(t.sessions.inFirstSession(scope)).toBe(true);
    t.sessions.forgetCached();
    expect(t.sessions.inFirstSession(scope)).toBe(false);
  });
});
