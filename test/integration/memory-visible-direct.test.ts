/**
 * The entries a place may see, read below Prisma (memory/visible-store.ts) as a
 * session's first turn reads them: the same rows, in the same order, with every column as Prisma
 * reads it, as the Prisma read (`visibleWhere`) for every kind of place, on both databases. The
 * scope rule is the same one written twice, so this compares them on entries of every scope.
 */
import { expect, it } from "vitest";
import { MemoryStore } from "../../src/memory/store.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import type { Scope } from "../../src/ground/types.ts";
import type { SqlParam } from "../../src/db/direct.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

const BUDGETS = { user: 100_000, channel: 100_000, team: 100_000 };

forEachDatabase("memory read below Prisma", (getDb) => {
  it("finds what the Prisma read finds, for every place and kind, every column alike", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const ws = uniqueId("ws");
    const at = async (user: string, channel: string, isDm = false): Promise<Scope> => scopeOf(await history.resolve(inboundFor({ workspace: ws, user, channel, isDm }, "hi")));
    const aliceC1 = await at("UA", "C1");
    const bobC2 = await at("UB", "C2");
    const aliceDm = await at("UA", "DA", true);
    const elsewhere = scopeOf(await history.resolve(inboundFor({ workspace: uniqueId("ws"), user: "UA", channel: "C1", isDm: false }, "hi")));
    const workspaceId = aliceC1.workspaceId;
    const t0 = Date.UTC(2026, 2, 1, 9);
    let n = 0;
    const add = (data: Record<string, unknown>) =>
      db.prisma.memoryEntry.create({ data: { workspaceId, text: `entry ${n}`, source: "tool", createdAt: new Date(t0 + (n++ % 4) * 1000), ...data } as never });
    await add({ scope: "team", kind: "fact" });
    await add({ scope: "team", kind: "rule", confidence: 0.75, quote: "always", origin: "{}", verifiedAt: new Date(t0 + 5), verifiedById: aliceC1.personId, validFrom: new Date(t0 + 7), lastUsedAt: new Date(t0 + 9), conflictPostId: 42, proposalMessageId: 7, sourceMessageId: 3, scannedWith: "r1", flag: "check" });
    await add({ scope: "team", kind: "lesson" });
    await add({ scope: "channel", channelKey: aliceC1.channelKey, kind: "lesson", proposedScope: "team", remindedAt: new Date(t0 + 11) });
    await add({ scope: "channel", channelKey: aliceC1.channelKey, kind: "fact" });
    await add({ scope: "channel", channelKey: bobC2.channelKey, kind: "fact" });
    await add({ scope: "user", ownerId: aliceC1.personId, kind: "fact" });
    await add({ scope: "user", ownerId: bobC2.personId, kind: "lesson" });
    await add({ scope: "team", kind: "fact", status: "pending", createdById: bobC2.personId });
    await add({ scope: "team", kind: "fact", status: "archived" });
    await add({ scope: "team", kind: "fact", status: "superseded", validUntil: new Date(t0 + 13) });
    await db.prisma.memoryEntry.create({ data: { workspaceId: elsewhere.workspaceId, scope: "team", kind: "fact", text: "another workspace's", source: "tool" } });

    const viaPrisma = new MemoryStore(db.prisma, BUDGETS);
    const direct = new MemoryStore(db.prisma, BUDGETS, undefined, undefined, db);
    let compared = 0;
    for (const scope of [aliceC1, bobC2, aliceDm, elsewhere]) {
      for (const kind of [undefined, "fact", "lesson", "rule"] as const) {
        const want = await viaPrisma.visible(scope, kind);
        expect(await direct.visible(scope, kind)).toEqual(want);
        compared += want.length;
      }
    }
    // Alice in C1 sees team (3), C1's (2) and her own (1); in her DM no channel's; nothing pending, archived or superseded.
    // Oldest first, then by id (created in order): team 0-2, C1's 3-4, hers 6.
    expect((await direct.visible(aliceC1)).map((e) => e.text)).toEqual(["entry 0", "entry 4", "entry 1", "entry 2", "entry 6", "entry 3"]);
    expect((await direct.visible(aliceDm)).map((e) => e.text).sort()).toEqual(["entry 0", "entry 1", "entry 2", "entry 6"]);
    expect((await direct.visible(elsewhere)).map((e) => e.text)).toEqual(["another workspace's"]);
    expect(compared).toBeGreaterThan(15);
  });

  it("reads a burst of places at once with the same rows each would read alone; on PostgreSQL in fewer statements", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const ws = uniqueId("ws");
    const places: Scope[] = [];
    for (let c = 0; c < 24; c++) places.push(scopeOf(await history.resolve(inboundFor({ workspace: ws, user: `U${c % 6}`, channel: c % 4 === 0 ? `D${c}` : `C${c % 5}`, isDm: c % 4 === 0 }, "hi"))));
    const other = scopeOf(await history.resolve(inboundFor({ workspace: uniqueId("ws"), user: "U0", channel: "C0", isDm: false }, "hi")));
    let n = 0;
    const add = (scope: Scope, data: Record<string, unknown>) => db.prisma.memoryEntry.create({ data: { workspaceId: scope.workspaceId, text: `entry ${n++}`, source: "tool", ...data } as never });
    for (const [i, p] of places.entries()) {
      await add(p, { scope: "user", ownerId: p.personId, kind: i % 2 ? "fact" : "lesson" });
      await add(p, { scope: "channel", channelKey: p.channelKey, kind: "fact" });
    }
    await add(places[0]!, { scope: "team", kind: "rule" });
    await add(other, { scope: "team", kind: "fact" });
    await add(other, { scope: "user", ownerId: other.personId, kind: "fact" });

    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const store = new MemoryStore(db.prisma, BUDGETS, undefined, undefined, { ...db, direct });
    const alone: string[][] = [];
    for (const p of [...places, other]) alone.push((await store.visible(p)).map((e) => e.text));
    statements = 0;
    const together = await Promise.all([...places, other].map((p) => store.visible(p)));
    expect(together.map((rows) => rows.map((e) => e.text))).toEqual(alone);
    // Nobody sees another workspace's entries, another person's own, or a channel's in a DM.
    for (const [i, p] of places.entries()) {
      for (const e of together[i]!) {
        expect(e.workspaceId).toBe(p.workspaceId);
        expect(e.workspaceId).not.toBe(other.workspaceId);
        if (e.scope === "user") expect(e.ownerId).toBe(p.personId);
        if (e.scope === "channel") expect(p.isDm ? null : e.channelKey).toBe(p.channelKey);
      }
    }
    expect(alone.at(-1)).toEqual(["entry 49", "entry 50"]);
    if (db.provider === "postgresql") expect(statements).toBeLessThanOrEqual(5);
    else expect(statements).toBe(25);
  });
});
