/**
 * The lease indexes (migration lease_indexes_partial) hold only messages under a lease, and the
 * statements that look leases up are still answered from them: every such statement names a lease
 * (an owner, a time, IS NOT NULL), which is what lets a partial index serve it. PostgreSQL is asked
 * for its generic plan, the one a prepared statement with a parameter gets.
 */
import { expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";

const LOOKUPS = [
  { sql: `SELECT id FROM "Message" WHERE "leaseOwner" = $1`, type: "text", value: "a-process", index: "Message_leaseOwner_idx" },
  { sql: `SELECT id FROM "Message" WHERE "leaseUntil" <= $1 AND "leaseOwner" IS NOT NULL`, type: "timestamp(3)", value: "2026-12-06 00:00:00", index: "Message_leaseUntil_idx" },
];

forEachDatabase("lease indexes", (getDb) => {
  it("are partial: only rows under a lease", async () => {
    const db = getDb();
    const defs =
      db.provider === "sqlite"
        ? await db.prisma.$queryRawUnsafe<{ def: string }[]>(`SELECT sql AS def FROM sqlite_master WHERE name IN ('Message_leaseOwner_idx', 'Message_leaseUntil_idx') ORDER BY name`)
        : await db.prisma.$queryRawUnsafe<{ def: string }[]>(`SELECT indexdef AS def FROM pg_indexes WHERE indexname IN ('Message_leaseOwner_idx', 'Message_leaseUntil_idx') ORDER BY indexname`);
    expect(defs.map((d) => d.def.replace(/\s+/g, " "))).toEqual([expect.stringMatching(/\(\s*"?leaseOwner"?\s*\) WHERE \(?\s*"?leaseOwner"? IS NOT NULL\)?$/), expect.stringMatching(/\(\s*"?leaseUntil"?\s*\) WHERE \(?\s*"?leaseUntil"? IS NOT NULL\)?$/)]);
  });

  it("answer the look-ups of a lease by owner and by time", async () => {
    const db = getDb();
    for (const { sql, type, value, index } of LOOKUPS) {
      let plan: string;
      if (db.provider === "sqlite") {
        const rows = await db.prisma.$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${sql.replace("$1", "?")}`, value);
        plan = rows.map((r) => r.detail).join("\n");
      } else {
        plan = await db.prisma.$transaction(async (tx) => {
          // A table this small is read whole otherwise; what matters is that the index may serve it.
          await tx.$executeRawUnsafe(`SET LOCAL enable_seqscan = off`);
          await tx.$executeRawUnsafe(`SET LOCAL plan_cache_mode = force_generic_plan`);
          await tx.$executeRawUnsafe(`PREPARE lease_lookup(${type}) AS ${sql}`);
          try {
            const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN EXECUTE lease_lookup('${value}')`);
            return rows.map((r) => r["QUERY PLAN"]).join("\n");
          } finally {
            await tx.$executeRawUnsafe(`DEALLOCATE lease_lookup`);
          }
        });
      }
      expect(plan, sql).toContain(index);
    }
  });
});
