/**
 * A posted reply recorded (HistoryStore.recordDeliveries): the reply's platform id, a Delivery row
 * per posted part (what reactions find the reply by), and the end of the turn's lease on the
 * message it answers, all or nothing. On PostgreSQL one statement, on SQLite one transaction of two
 * (DirectSql.chain): the same rows either way.
 */
import { expect, it } from "vitest";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

forEachDatabase("a posted reply recorded", (getDb) => {
  async function setUp() {
    const db = getDb();
    // Round trips (PostgreSQL) and transactions (SQLite): a statement alone, or a chain of them.
    let statements = 0;
    const direct = {
      ...db.direct,
      rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)),
      chain: (list: readonly (readonly [string, readonly SqlParam[]])[]) => (statements++, db.direct.chain(list)),
    };
    const history = new HistoryStore({ ...db, direct });
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "q1"));
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const lease = { owner: "this-process", until: new Date(Date.now() + 60_000) };
    const q1 = (await history.recordInbound(place, inboundFor(o, "q1"), session.id, lease))!;
    const reply = (await history.recordReply(place, session.id, q1.id, "a1", "sent", lease))!;
    statements = 0;
    return { db, history, place, q1, reply, statements: () => statements };
  }

  it("sets the reply's platform id, writes a delivery per part and ends the turn's lease", async () => {
    const t = await setUp();
    expect((await t.db.prisma.message.findUnique({ where: { id: t.q1.id } }))?.leaseOwner).toBe("this-process");
    await t.history.recordDeliveries(t.place.conversation.id, t.reply.id, "C1", ["171.001", "171.002"]);
    expect(t.statements()).toBe(1);
    expect((await t.db.prisma.message.findUnique({ where: { id: t.reply.id } }))?.platformId).toBe("171.001");
    expect(await t.db.prisma.message.findUnique({ where: { id: t.q1.id } })).toMatchObject({ leaseOwner: null, leaseUntil: null });
    for (const platformId of ["171.001", "171.002"]) {
      const d = await t.history.findDelivery(scopeOf(t.place), "C1", platformId);
      expect(d).toMatchObject({ workspaceId: t.place.workspace.id, conversationId: t.place.conversation.id, messageId: t.reply.id, channelId: "C1", platformId });
      expect(d!.id).toMatch(/^c[0-9a-z]{24}$/);
      expect(Math.abs(d!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    }
    expect(await t.db.prisma.delivery.count({ where: { messageId: t.reply.id } })).toBe(2);
  });

  it("refuses a reply of another conversation and writes nothing", async () => {
    const t = await setUp();
    const other = await t.history.resolve(inboundFor({ workspace: t.place.workspace.externalId, user: "U1", channel: "C2", isDm: false }, "x1"));
    await expect(t.history.recordDeliveries(other.conversation.id, t.reply.id, "C2", ["171.009"])).rejects.toThrow(/no stored reply/);
    expect((await t.db.prisma.message.findUnique({ where: { id: t.reply.id } }))?.platformId).toBeNull();
    expect(await t.db.prisma.delivery.count({ where: { messageId: t.reply.id } })).toBe(0);
    expect((await t.db.prisma.message.findUnique({ where: { id: t.q1.id } }))?.leaseOwner).toBe("this-process");
  });

  it("writes none of it when one part is refused (a platform id the channel has already)", async () => {
    const t = await setUp();
    const earlier = (await t.history.recordReply(t.place, t.reply.sessionId!, t.q1.id, "a0", "sent"))!;
    await t.history.recordDeliveries(t.place.conversation.id, earlier.id, "C1", ["171.005"]);
    await expect(t.history.recordDeliveries(t.place.conversation.id, t.reply.id, "C1", ["171.004", "171.005"])).rejects.toThrow();
    expect((await t.db.prisma.message.findUnique({ where: { id: t.reply.id } }))?.platformId).toBeNull();
    expect(await t.db.prisma.delivery.count({ where: { messageId: t.reply.id } })).toBe(0);
  });
});
