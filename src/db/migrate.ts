/**
 * Applies the committed Prisma migrations at start-up, with no Prisma CLI and no engine download.
 * Bookkeeping is Prisma's own `_prisma_migrations` table (same columns, sha256 checksums of each
 * migration.sql), so `prisma migrate deploy` and `migrate status` agree with what this applied.
 */
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../ground/paths.ts";
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";

export type Provider = "sqlite" | "postgresql";

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

const root = join(PROJECT_ROOT, "prisma");

export function loadMigrations(provider: Provider, dir = join(root, provider, "migrations")): MigrationFile[] {
  if (!existsSync(dir)) throw new Error(`no migrations folder at ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

const PG_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum" VARCHAR(64) NOT NULL,
    "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL,
    "logs" TEXT,
    "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

function checkApplied(migrations: MigrationFile[], applied: Map<string, string>): void {
  for (const m of migrations) {
    const sum = applied.get(m.name);
    if (sum !== undefined && sum !== m.checksum) {
      throw new Error(
        `migration ${m.name} was changed after it was applied (checksum differs); ` +
          "add a new migration instead of editing an applied one",
      );
    }
  }
}

export function migrateSqlite(db: BetterSqlite3.Database, migrations = loadMigrations("sqlite")): MigrateResult {
  db.exec(SQLITE_TABLE);
  const rows = db
    .prepare(`SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`)
    .all() as { migration_name: string; checksum: string }[];
  const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
  checkApplied(migrations, applied);
  const done: string[] = [];
  for (const m of migrations) {
    if (applied.has(m.name)) continue;
    const started = new Date().toISOString();
    // One transaction per migration: a failure leaves the database as it was before that migration.
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare(
        `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
      ).run(randomUUID(), m.checksum, new Date().toISOString(), m.name, started);
    })();
    done.push(m.name);
  }
  return { applied: done, alreadyApplied: applied.size };
}

/** An arbitrary constant: replicas starting together take this lock so one applies, the rest wait. */
const PG_LOCK_ID = 72_707_369;

export async function migratePostgres(client: pg.ClientBase, migrations = loadMigrations("postgresql")): Promise<MigrateResult> {
  await client.query("SELECT pg_advisory_lock($1)", [PG_LOCK_ID]);
  try {
    await client.query(PG_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    checkApplied(migrations, applied);
    const done: string[] = [];
    for (const m of migrations) {
      if (applied.has(m.name)) continue;
      await client.query("BEGIN");
      try {
        const started = new Date();
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), m.checksum, m.name, started],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      done.push(m.name);
    }
    return { applied: done, alreadyApplied: applied.size };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PG_LOCK_ID]);
  }
}
