/**
 * Rows created below Prisma when a message comes from someone, somewhere, new (history/store:
 * person and conversation; agent/session-store.ts: the session), raced by two processes: both must
 * end up with the same rows, one of them the creator, and ids in Prisma's own cuid form.
 */
import { expect, it } from "vitest";
import type { SqlParam } from "../../src/db/direct.ts";
import { SessionStore } from "../../src/agent/session-store.ts";
import { looksLikeCuid } from "../../src/ground/short-id.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

forEachDatabase("new people, conversations and sessions raced by two processes", (getDb) => {
  it("gives both the same person and conversation, created once and heard of once", async () => {
    const db = getDb();
    const created: string[] = [];
    const [a, b] = [new HistoryStore(db, (id) => created.push(id)), new HistoryStore(db, (id) => created.push(id))];
    const o = { workspace: uniqueId("ws"), user: "U-NEW", channel: "C-NEW", isDm: false };
    await a.resolve(inboundFor(o, "warm the workspace up"));
    const other = { ...o, user: "U-OTHER", channel: "C-OTHER" };
    const [pa, pb] = await Promise.all([a.resolve(inboundFor(other, "one")), b.resolve(inboundFor(other, "two"))]);
    expect(pa.person).toEqual(pb.person);
    expect(pa.conversation).toEqual(pb.conversation);
    expect(looksLikeCuid(pa.person.id) && looksLikeCuid(pa.conversation.id)).toBe(true);
    expect(created.filter((id) => id === pa.conversation.id)).toHaveLength(1);
    const stored = await db.prisma.person.findUnique({ where: { id: pa.person.id } });
    expect(stored).toMatchObject({ externalId: "U-OTHER", workspaceId: pa.workspace.id, isBot: false, displayName: pa.person.displayName });
    expect(await db.prisma.conversation.findUnique({ where: { id: pa.conversation.id } })).toEqual(pa.conversation);
  });

  it("opens one session for both: the second is told it was not the one to open it", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const scope = scopeOf(await history.resolve(inboundFor({ workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false }, "hi")));
    const now = new Date(Date.UTC(2026, 6, 1, 9));
    const [x, y] = await Promise.all([new SessionStore(db).start(scope, now), new SessionStore(db).start(scope, now)]);
    expect(x.session.id).toBe(y.session.id);
    expect([x.isNew, y.isNew].sort()).toEqual([false, true]);
    expect(looksLikeCuid(x.session.id)).toBe(true);
    const row = await db.prisma.chatSession.findUnique({ where: { id: x.session.id } });
    expect(row).toMatchObject({ conversationId: scope.conversationId, startedAt: now, lastActivityAt: now, endedAt: null, snapshot: null });
  });

  it("finds or makes a burst of new people and conversations together: each once, shared by all who asked", async () => {
    const db = getDb();
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const created: string[] = [];
    const history = new HistoryStore({ ...db, direct }, (id) => created.push(id));
    const workspace = uniqueId("ws");
    await history.resolve(inboundFor({ workspace, user: "U-FIRST", channel: "C-FIRST", isDm: false }, "warm the workspace up"));
    // An existing person in new conversations, new people in one new conversation, and 40 new of both.
    await history.resolve(inboundFor({ workspace, user: "U-OLD", channel: "C-OLD", isDm: false }, "hi"));
    statements = 0;
    const asks = [
      ...Array.from({ length: 40 }, (_, c) => ({ workspace, user: `U${c}`, channel: `C${c}`, isDm: false })),
      { workspace, user: "U-OLD", channel: "C-NEW-1", isDm: false },
      { workspace, user: "U-OLD", channel: "C-NEW-2", isDm: false },
      { workspace, user: "U-A", channel: "C-SHARED", isDm: false },
      { workspace, user: "U-B", channel: "C-SHARED", isDm: false },
      { workspace, user: "U-D", channel: "D-U-D", isDm: true },
    ];
    const places = await Promise.all(asks.map((o) => history.resolve(inboundFor(o, "hello"))));
    const people = await db.prisma.person.findMany({ where: { workspaceId: places[0]!.workspace.id } });
    const conversations = await db.prisma.conversation.findMany({ where: { workspaceId: places[0]!.workspace.id } });
    for (const [i, o] of asks.entries()) {
      const place = places[i]!;
      expect(place.person).toEqual(people.find((p) => p.externalId === o.user));
      expect(place.conversation).toEqual(conversations.find((c) => c.id === place.conversation.id));
      expect(place.conversation.channelId).toBe(o.channel);
    }
    // One row per person and per conversation, however many asked at once.
    expect(people.filter((p) => p.externalId === "U-OLD")).toHaveLength(1);
    expect(new Set(places.slice(40, 42).map((p) => p.conversation.id)).size).toBe(2);
    expect(places[42]!.conversation.id).toBe(places[43]!.conversation.id);
    expect(places[44]!.conversation).toMatchObject({ isDm: true, ownerId: places[44]!.person.id });
    // Each new conversation heard of once: 40 + 2 + 1 shared + 1 DM.
    const made = places.map((p) => p.conversation.id).filter((id, i, all) => all.indexOf(id) === i && id !== places[0]!.conversation.id);
    expect(created.filter((id) => made.includes(id)).sort()).toEqual(made.sort());
    if (db.provider === "postgresql") expect(statements).toBeLessThan(40);
    else expect(statements).toBeGreaterThanOrEqual(2 * 40);
  });

  it("opens a burst of new sessions together, one for each conversation, and saves their snapshots together", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const workspace = uniqueId("ws");
    const scopes = [];
    for (let c = 0; c < 30; c++) scopes.push(scopeOf(await history.resolve(inboundFor({ workspace, user: `U${c}`, channel: `C${c}`, isDm: false }, "hi"))));
    const sessions = new SessionStore(db);
    const now = new Date(Date.UTC(2026, 6, 1, 9));
    // Two for the first conversation, as two replicas would: one opens it, the other is told so.
    const started = await Promise.all([...scopes.map((scope) => sessions.start(scope, now)), new SessionStore(db).start(scopes[0]!, now)]);
    expect(started.slice(1, 30).every((s) => s.isNew)).toBe(true);
    expect(started[0]!.session.id).toBe(started[30]!.session.id);
    expect([started[0]!.isNew, started[30]!.isNew].sort()).toEqual([false, true]);
    const rows = await db.prisma.chatSession.findMany({ where: { conversationId: { in: scopes.map((s) => s.conversationId) } } });
    expect(rows).toHaveLength(30);
    for (const [i, scope] of scopes.entries()) expect(rows.find((r) => r.conversationId === scope.conversationId)?.id).toBe(started[i]!.session.id);
    // Their first turns' snapshots, saved at the same moment: each where its own session reads it.
    await Promise.all(started.slice(0, 30).map((s, i) => sessions.saveSnapshot(s.session.id, `{"shared":"snapshot ${i}"}`)));
    const saved = await db.prisma.chatSession.findMany({ where: { id: { in: started.map((s) => s.session.id) } } });
    for (const [i, s] of started.slice(0, 30).entries()) expect(saved.find((r) => r.id === s.session.id)?.snapshot).toBe(`{"shared":"snapshot ${i}"}`);
    expect((await sessions.get(scopes[7]!, started[7]!.session.id)).snapshot).toBe(`{"shared":"snapshot 7"}`);
  });
});
