/**
 * A statement sent while another caller's transaction is open is not part of that transaction: a
 * rollback there keeps it. On SQLite every query shares one connection, which is what
 * src/db/sqlite-gate.ts is for; PostgreSQL gives each transaction a connection of its own.
 */
import { expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";

forEachDatabase("transaction isolation", (getDb) => {
  it("keeps a write made outside a transaction that is rolled back while it runs", async () => {
    const db = getDb().prisma;
    const inside = uniqueId("inside");
    const outside = uniqueId("outside");
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const tx = db
      .$transaction(async (t) => {
        await t.workspace.create({ data: { platform: "slack", externalId: inside } });
        opened();
        await hold;
        throw new Error("rolled back on purpose");
      })
      .then(
        () => "committed",
        (err: Error) => err.message,
      );
    await open;
    const write = db.workspace.create({ data: { platform: "slack", externalId: outside } });
    // The outside write is sent while the transaction is open; the transaction then fails.
    setTimeout(release, 20);
    await write;
    expect(await tx).toBe("rolled back on purpose");
    const rows = await db.workspace.findMany({ where: { externalId: { in: [inside, outside] } } });
    expect(rows.map((r) => r.externalId)).toEqual([outside]);
  });

  it("runs transactions one at a time and every queued statement after the one it waited for", async () => {
    const db = getDb().prisma;
    const tag = uniqueId("order");
    const order: string[] = [];
    const txn = (name: string) =>
      db.$transaction(async (t) => {
        await t.workspace.create({ data: { platform: "slack", externalId: `${tag}-${name}` } });
        await new Promise((r) => setTimeout(r, 10));
        order.push(name);
      });
    const outside = async (name: string) => {
      await db.workspace.create({ data: { platform: "slack", externalId: `${tag}-${name}` } });
      order.push(name);
    };
    await Promise.all([txn("t1"), outside("q1"), txn("t2"), outside("q2")]);
    const stored = await db.workspace.findMany({ where: { externalId: { startsWith: tag } } });
    expect(stored).toHaveLength(4);
    // Both transactions ran whole; neither swallowed the other's or the outside writes.
    expect(new Set(order)).toEqual(new Set(["t1", "q1", "t2", "q2"]));
  });
});
