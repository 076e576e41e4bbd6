/**
 * The reads keyed by an id found earlier (a session, a reply, a delivery, a person's pending
 * entries) take the scope they are made in and enforce it in their queries: given another
 * conversation's, workspace's or person's key they find nothing, on SQLite and PostgreSQL.
 * Every test works in its own workspaces (unique external ids).
 */
import { expect, it } from "vitest";
import type { PersonScope, Scope } from "../../src/ground/types.ts";
import type { Provenance } from "../../src/db/revisions.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { SessionManager } from "../../src/agent/sessions.ts";
import { SessionStore } from "../../src/agent/session-store.ts";
import { MemoryStore } from "../../src/memory/store.ts";
import { ErasureStore, TOMBSTONE } from "../../src/erasure/erasure-store.ts";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { forgePersonScope, forgeWorkspaceScope } from "../support/scopes.ts";

const IDLE_MS = 60 * 60 * 1000;
const BUDGETS = { user: 1375, channel: 1500, team: 2200 };

const prov = (scope: PersonScope): Provenance => ({ source: "tool", actorId: scope.personId, sourceMessageId: null });

/** The same person id, looked for in another workspace. */
const elsewhere = (scope: PersonScope, other: Scope): PersonScope => forgePersonScope({ workspaceId: other.workspaceId, personId: scope.personId });

forEachDatabase("reads in another scope", (getDb) => {
  const channel = (workspace: string, channelId = "C1", user = "U1"): PlaceOptions => ({ workspace, user, channel: channelId, isDm: false });

  /** A person's message in `opts`' place, in a session, and cairn's reply to it. */
  async function exchange(opts: PlaceOptions, text: string) {
    const db = getDb();
    const history = new HistoryStore(db);
    const sessions = new SessionManager(new SessionStore(db), IDLE_MS);
    const inbound = inboundFor(opts, text);
    const place = await history.resolve(inbound);
    const { session } = await sessions.current(scopeOf(place), new Date());
    const asked = (await history.recordInbound(place, inbound, session.id))!;
    const reply = await history.recordReply(place, session.id, asked.id, `noted: ${text}`, "sent");
    return { history, sessions, place, scope: scopeOf(place), session, asked, reply };
  }

  /** Two conversations of one workspace (channels C1 and C2) and one of another workspace. */
  async function threeConversations() {
    const ws = uniqueId("ws");
    const a = await exchange(channel(ws, "C1"), "the deploy key rotates on fridays");
    const b = await exchange(channel(ws, "C2"), "lunch is at noon");
    const other = await exchange(channel(uniqueId("ws"), "C1"), "standup moved to 10");
    return { a, b, other };
  }

  it("reads a session's messages only with its own conversation's scope", async () => {
    const { a, b, other } = await threeConversations();
    const read = (scope: Scope) => a.history.sessionMessages(scope, a.session.id, null, a.asked.id);
    expect((await read(a.scope)).map((m) => m.text)).toEqual(["the deploy key rotates on fridays", "noted: the deploy key rotates on fridays"]);
    expect(await read(b.scope)).toEqual([]);
    expect(await read(other.scope)).toEqual([]);
    // The right conversation with another workspace's id is not the right scope either.
    expect(await read({ ...a.scope, workspaceId: other.scope.workspaceId })).toEqual([]);
  });

  it("finds a message only in its own conversation", async () => {
    const { a, b, other } = await threeConversations();
    expect(await a.history.findMessage(a.scope, a.reply.id)).toMatchObject({ id: a.reply.id, text: a.reply.text });
    expect(await a.history.findMessage(b.scope, a.reply.id)).toBeNull();
    expect(await a.history.findMessage(other.scope, a.reply.id)).toBeNull();
  });

  it("gets a session only for its own conversation, cached or not, and says why not", async () => {
    const { a, b } = await threeConversations();
    const fresh = () => new SessionManager(new SessionStore(getDb()), IDLE_MS);
    expect((await a.sessions.get(a.scope, a.session.id)).id).toBe(a.session.id);
    expect((await fresh().get(a.scope, a.session.id)).id).toBe(a.session.id);
    // a.sessions holds the row in its cache; a fresh manager reads it from the database.
    await expect(a.sessions.get(b.scope, a.session.id)).rejects.toThrow(`no session ${a.session.id} in conversation ${b.scope.conversationId}`);
    await expect(fresh().get(b.scope, a.session.id)).rejects.toThrow(`no session ${a.session.id} in conversation ${b.scope.conversationId}`);
  });

  it("finds a delivery only in its own workspace, and records one only for a reply of the conversation named", async () => {
    const { a, b, other } = await threeConversations();
    await a.history.recordDeliveries(a.scope.conversationId, a.reply.id, "C1", ["1700000001.000100", "1700000001.000200"]);
    expect(await a.history.findDelivery(a.scope, "C1", "1700000001.000200")).toMatchObject({ messageId: a.reply.id, conversationId: a.scope.conversationId });
    expect(await a.history.findMessage(a.scope, a.reply.id)).toMatchObject({ platformId: "1700000001.000100" });
    expect(await a.history.findDelivery(forgeWorkspaceScope({ workspaceId: other.scope.workspaceId }), "C1", "1700000001.000200")).toBeNull();

    await expect(a.history.recordDeliveries(b.scope.conversationId, a.reply.id, "C2", ["1700000002.000100"])).rejects.toThrow(
      `no stored reply ${a.reply.id} in conversation ${b.scope.conversationId}`,
    );
    expect(await getDb().prisma.delivery.count({ where: { messageId: a.reply.id } })).toBe(2);
  });

  it("lists and confirms pending team entries only for the person who proposed them, in their workspace", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const alice = (await place(db, { workspace: ws, user: "UA", channel: "DA", isDm: true })).scope;
    const bob = (await place(db, { workspace: ws, user: "UB", channel: "DB", isDm: true })).scope;
    const other = (await place(db, { workspace: uniqueId("ws"), user: "UA", channel: "DA", isDm: true })).scope;
    const memory = new MemoryStore(db.prisma, BUDGETS);
    await memory.apply(alice, [{ action: "add", target: "team", content: "The VPN moves to WireGuard in May" }], prov(alice));
    const pending = await memory.pendingBy(alice);
    expect(pending.map((e) => e.text)).toEqual(["The VPN moves to WireGuard in May"]);
    const ids = pending.map((e) => e.id);

    expect(await memory.pendingBy(bob)).toEqual([]);
    expect(await memory.pendingBy(elsewhere(alice, other))).toEqual([]);
    expect(await memory.confirm(bob, ids, prov(bob))).toEqual([]);
    expect(await memory.confirm(elsewhere(alice, other), ids, prov(alice))).toEqual([]);
    expect(await memory.entries(alice, "team")).toEqual([]);

    expect((await memory.confirm(alice, ids, prov(alice))).map((e) => e.id)).toEqual(ids);
    expect((await memory.entries(alice, "team")).map((e) => e.text)).toEqual(["The VPN moves to WireGuard in May"]);
  });

  it("counts, forgets and erases a person's data only with their own key", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const a = await exchange(channel(ws, "C1", "U1"), "I prefer short answers");
    const bob = (await place(db, channel(ws, "C1", "U2"))).scope;
    const other = (await place(db, channel(uniqueId("ws"), "C1", "U1"))).scope;
    const memory = new MemoryStore(db.prisma, BUDGETS);
    await memory.apply(a.scope, [{ action: "add", target: "user", content: "Prefers short answers" }], prov(a.scope));
    const [entry] = await memory.entries(a.scope, "user");
    const caches = { forgetCached: () => {}, forgetPerson: () => {} };
    const erasure = new ErasureStore(db.prisma, { memory: caches, skills: caches, sessions: caches, history: caches });

    expect(await a.history.countByAuthor(a.scope)).toBe(1);
    expect(await a.history.countByAuthor(elsewhere(a.scope, other))).toBe(0);

    expect(await erasure.forgetEntry(bob, entry!.id)).toBe(false);
    expect(await erasure.forgetEntry(elsewhere(a.scope, other), entry!.id)).toBe(false);
    await expect(erasure.erasePerson(elsewhere(a.scope, other), { anonymize: true })).rejects.toThrow(
      `no person ${a.scope.personId} in workspace ${other.workspaceId}`,
    );
    expect((await memory.entries(a.scope, "user")).map((e) => e.id)).toEqual([entry!.id]);
    expect(await a.history.findMessage(a.scope, a.asked.id)).toMatchObject({ text: "I prefer short answers" });

    // With the person's own key, both reach their data.
    expect(await erasure.forgetEntry(a.scope, entry!.id)).toBe(true);
    expect(await memory.entries(a.scope, "user")).toEqual([]);
    expect(await erasure.erasePerson(a.scope, { anonymize: false })).toMatchObject({ messages: 1 });
    expect(await a.history.findMessage(a.scope, a.asked.id)).toMatchObject({ text: TOMBSTONE });
  });
});
