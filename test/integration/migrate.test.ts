/**
 * Start-up migrations: applied once, recorded in Prisma's own bookkeeping, refused when an applied
 * migration was edited, and safe when several replicas start together on PostgreSQL.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations, migratePostgres, migrateSqlite } from "../../src/db/migrate.ts";
import { ADMIN_URL, databases, REQUIRE_POSTGRES } from "../support/db.ts";

describe("SQLite migrations at start-up", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-migrate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("applies every migration once, with Prisma-compatible checksums, and then nothing", () => {
    const db = new BetterSqlite3(join(dir, "a.db"));
    try {
      const migrations = loadMigrations("sqlite");
      expect(migrations.length).toBeGreaterThan(0);
      const first = migrateSqlite(db);
      expect(first.applied).toEqual(migrations.map((m) => m.name));
      expect(migrateSqlite(db)).toEqual({ applied: [], alreadyApplied: migrations.length });
      const rows = db.prepare(`SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations"`).all() as {
        migration_name: string;
        checksum: string;
        finished_at: string | null;
        applied_steps_count: number;
      }[];
      const file = fileURLToPath(new URL(`../../prisma/sqlite/migrations/${migrations[0]!.name}/migration.sql`, import.meta.url));
      expect(rows[0]).toMatchObject({
        migration_name: migrations[0]!.name,
        checksum: createHash("sha256").update(readFileSync(file)).digest("hex"),
        applied_steps_count: 1,
      });
      expect(rows[0]!.finished_at).not.toBeNull();
      // The full-text index exists and follows inserts.
      const tables = db.prepare(`SELECT name FROM sqlite_master WHERE name = 'message_fts'`).all();
      expect(tables).toHaveLength(1);
    } finally {
      db.close();
    }
  });

  it("refuses to start when an applied migration was edited", () => {
    const db = new BetterSqlite3(join(dir, "b.db"));
    try {
      migrateSqlite(db);
      const edited = loadMigrations("sqlite").map((m, i) => (i === 0 ? { ...m, checksum: "0".repeat(64) } : m));
      expect(() => migrateSqlite(db, edited)).toThrow(/was changed after it was applied/);
    } finally {
      db.close();
    }
  });

  it("rolls back a failing migration and records nothing for it", () => {
    const db = new BetterSqlite3(join(dir, "c.db"));
    try {
      const broken = [...loadMigrations("sqlite"), { name: "99999999999999_broken", sql: `CREATE TABLE "T1" (x INT); SELECT nope FROM nowhere;`, checksum: "f".repeat(64) }];
      expect(() => migrateSqlite(db, broken)).toThrow();
      const names = (db.prepare(`SELECT migration_name FROM "_prisma_migrations"`).all() as { migration_name: string }[]).map((r) => r.migration_name);
      expect(names).not.toContain("99999999999999_broken");
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'T1'`).all()).toHaveLength(0);
    } finally {
      db.close();
    }
  });
});

const pgAvailable = databases.find((d) => d.name === "postgresql")?.available === true;
(pgAvailable || REQUIRE_POSTGRES ? describe : describe.skip)("PostgreSQL migrations at start-up", () => {
  const name = `cairn_test_mig_${randomBytes(6).toString("hex")}`;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  afterAll(async () => {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });

  it("applies once when several replicas start at the same moment", async () => {
    await admin((c) => c.query(`CREATE DATABASE "${name}"`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const clients = Array.from({ length: 3 }, () => new pg.Client({ connectionString: url.toString() }));
    await Promise.all(clients.map((c) => c.connect()));
    try {
      const results = await Promise.all(clients.map((c) => migratePostgres(c)));
      const count = loadMigrations("postgresql").length;
      expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, count]);
      const { rows } = await clients[0]!.query(`SELECT count(*)::int AS n FROM "_prisma_migrations"`);
      expect(rows[0].n).toBe(count);
      // The generated tsvector column follows edits of the text (a DEFAULT would not).
      const col = await clients[0]!.query(`SELECT is_generated FROM information_schema.columns WHERE table_name = 'Message' AND column_name = 'search'`);
      expect(col.rows[0].is_generated).toBe("ALWAYS");
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
