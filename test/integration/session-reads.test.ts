/**
 * Session rows as the session store reads them below Prisma (agent/session-store.ts `open`,
 * `previous`, `get`): the rows Prisma reads, every column alike (times, the summary's message id,
 * nulls), on both databases; nothing of another conversation.
 */
import { expect, it } from "vitest";
import { SessionStore } from "../../src/agent/session-store.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

forEachDatabase("session rows read below Prisma", (getDb) => {
  it("reads the open, the previous and a given session as Prisma does", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const o = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const scope = scopeOf(await history.resolve(inboundFor(o, "hi")));
    const other = scopeOf(await history.resolve(inboundFor({ ...o, channel: "C2" }, "hi")));
    const t0 = Date.UTC(2026, 4, 2, 8, 30, 15, 123);
    const older = await db.prisma.chatSession.create({ data: { conversationId: scope.conversationId, startedAt: new Date(t0), lastActivityAt: new Date(t0 + 1000), endedAt: new Date(t0 + 5000), endReason: "idle", snapshot: '{"shared":"x"}', summary: "- they planned the move", summaryThroughId: 42 } });
    const previous = await db.prisma.chatSession.create({ data: { conversationId: scope.conversationId, startedAt: new Date(t0 + 10_000), lastActivityAt: new Date(t0 + 11_000), endedAt: new Date(t0 + 20_000), endReason: "request" } });
    const open = await db.prisma.chatSession.create({ data: { conversationId: scope.conversationId, startedAt: new Date(t0 + 30_000), lastActivityAt: new Date(t0 + 31_000) } });
    await db.prisma.chatSession.create({ data: { conversationId: other.conversationId, startedAt: new Date(t0 + 40_000), lastActivityAt: new Date(t0 + 41_000) } });

    const fresh = () => new SessionStore(db);
    const row = (id: string) => db.prisma.chatSession.findUnique({ where: { id } });
    expect(await fresh().open(scope)).toEqual(await row(open.id));
    expect(await fresh().previous(scope, open.id)).toEqual(await row(previous.id));
    expect(await fresh().previous(scope, previous.id)).toEqual(await row(older.id));
    expect(await fresh().get(scope, older.id)).toEqual(await row(older.id));
    await expect(fresh().get(other, older.id)).rejects.toThrow(`no session ${older.id} in conversation ${other.conversationId}`);
    expect(await fresh().previous(other, "none")).toBeNull();
  });
});
