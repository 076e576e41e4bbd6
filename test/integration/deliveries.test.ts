/**
 * A posted reply recorded (HistoryStore.recordDeliveries): the reply's platform id, a Delivery row
 * per posted part (what reactions find the reply by), and the end of the turn's lease on the
 * message it answers, all or nothing. On PostgreSQL one statement, on SQLite one transaction of two
 * (DirectSql.chain): the same rows either way. Posts recorded at the same moment go together.
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

  it("records the replies of a burst, posted at once, as each alone; a refused one fails alone; on PostgreSQL in fewer statements", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 6; c++) ts.push(await setUp());
    const t = ts[0]!;
    // ts[3]'s channel has one of the platform ids its reply would take: that post is refused.
    const earlier = (await ts[3]!.history.recordReply(ts[3]!.place, ts[3]!.reply.sessionId!, ts[3]!.q1.id, "a0", "sent"))!;
    await ts[3]!.history.recordDeliveries(ts[3]!.place.conversation.id, earlier.id, "C1", ["taken.2"]);
    const parts = (i: number): string[] => (i === 3 ? ["taken.1", "taken.2"] : i === 1 ? [`p${i}.1`] : [`p${i}.1`, `p${i}.2`, `p${i}.3`]);
    const before = t.statements();
    const outcomes = await Promise.allSettled([
      ...ts.map((x, i) => t.history.recordDeliveries(x.place.conversation.id, x.reply.id, "C1", parts(i))),
      // A reply of another conversation than the one named: nothing is written for it.
      t.history.recordDeliveries(ts[4]!.place.conversation.id, ts[5]!.q1.id, "C1", ["stray.1"]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "rejected"]);
    for (const [i, x] of ts.entries()) {
      const stored = await t.db.prisma.message.findUnique({ where: { id: x.reply.id } });
      const rows = await t.db.prisma.delivery.findMany({ where: { messageId: x.reply.id }, orderBy: { platformId: "asc" } });
      if (i === 3) {
        expect(stored?.platformId).toBeNull();
        expect(rows).toEqual([]);
        continue;
      }
      expect(stored?.platformId).toBe(`p${i}.1`);
      expect(rows.map((d) => [d.platformId, d.conversationId, d.workspaceId, d.channelId])).toEqual(parts(i).map((p) => [p, x.place.conversation.id, x.place.workspace.id, "C1"]));
      expect(await t.db.prisma.message.findUnique({ where: { id: x.q1.id } })).toMatchObject({ leaseOwner: null, leaseUntil: null });
    }
    expect(await t.db.prisma.delivery.count({ where: { platformId: "stray.1" } })).toBe(0);
    // PostgreSQL: the first alone, the rest together, and the batch that held a refused post again
    // one by one; SQLite: all in one transaction, then each again in its own.
    expect(t.statements() - before).toBe(t.db.provider === "postgresql" ? 2 + 6 : 1 + 7);
  });

  it("records a burst's posts in two statements on PostgreSQL (the first alone, the rest together), in one transaction on SQLite", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 6; c++) ts.push(await setUp());
    const t = ts[0]!;
    const before = t.statements();
    await Promise.all(ts.map((x, i) => t.history.recordDeliveries(x.place.conversation.id, x.reply.id, "C1", [`b${i}.1`, `b${i}.2`])));
    expect(t.statements() - before).toBe(t.db.provider === "postgresql" ? 2 : 1);
    for (const [i, x] of ts.entries()) expect((await t.db.prisma.delivery.findMany({ where: { messageId: x.reply.id }, orderBy: { platformId: "asc" } })).map((d) => d.platformId)).toEqual([`b${i}.1`, `b${i}.2`]);
  });
});
