/**
 * Rows created below Prisma when a message comes from someone, somewhere, new (history/store:
 * person and conversation; agent/session-store.ts: the session), raced by two processes: both must
 * end up with the same rows, one of them the creator, and ids in Prisma's own cuid form.
 */
import { expect, it } from "vitest";
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
});
