/**
 * Which committed migrations a database has, without applying any: what `cairn doctor` reports.
 * Read from Prisma's `_prisma_migrations` table, as migrate.ts writes it.
 */
import type { MigrationFile } from "./migrate.ts";

/** A row of `_prisma_migrations` that was not rolled back. */
export interface AppliedRow {
  name: string;
  checksum: string;
  finished: boolean;
}

export interface MigrationStatus {
  /** In this build and applied. */
  applied: string[];
  /** In this build, not applied yet (cairn applies them at start-up). */
  pending: string[];
  /** Applied, but not in this build: the database was migrated by a newer cairn. */
  unknown: string[];
  /** Applied with another checksum: the file was edited after it was applied. */
  changed: string[];
  /** Started and never finished (a Prisma CLI run that failed midway). */
  unfinished: string[];
}

/** The SQL that lists the rows compared, the same on both providers. */
export const APPLIED_ROWS_SQL = `SELECT migration_name, checksum, finished_at IS NOT NULL AS finished FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`;

export function compareMigrations(files: readonly MigrationFile[], rows: readonly AppliedRow[]): MigrationStatus {
  const done = new Map(rows.filter((r) => r.finished).map((r) => [r.name, r.checksum]));
  const known = new Set(files.map((f) => f.name));
  return {
    applied: files.filter((f) => done.get(f.name) === f.checksum).map((f) => f.name),
    pending: files.filter((f) => !done.has(f.name)).map((f) => f.name),
    unknown: [...done.keys()].filter((name) => !known.has(name)).sort(),
    changed: files.filter((f) => done.has(f.name) && done.get(f.name) !== f.checksum).map((f) => f.name),
    unfinished: rows.filter((r) => !r.finished && !done.has(r.name)).map((r) => r.name).sort(),
  };
}
