/**
 * The database: can it be opened, and are this build's migrations applied? Nothing is written: the
 * doctor never applies migrations (cairn does at start-up), it says which are pending; only an
 * edited, unfinished or unknown one is a problem.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { providerOf, sqlitePath } from "../db/client.ts";
import { loadMigrations, type Provider } from "../db/migrate.ts";
import { APPLIED_ROWS_SQL, compareMigrations, type AppliedRow, type MigrationStatus } from "../db/migration-status.ts";
import { databaseProblem } from "../app/startup-errors.ts";
import { fail, pass, seconds, type CheckLine } from "./check.ts";

const LABEL = "database";
const MIGRATIONS = "migrations";

/** Raw rows of APPLIED_ROWS_SQL: SQLite says 0/1 where PostgreSQL says false/true. */
function appliedRows(rows: readonly { migration_name: string; checksum: string; finished: unknown }[]): AppliedRow[] {
  return rows.map((r) => ({ name: r.migration_name, checksum: r.checksum, finished: r.finished === true || r.finished === 1 }));
}

const list = (names: readonly string[]): string => names.join(", ");
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The migrations line: what is pending, unknown or edited, or that all is applied. */
export function migrationLine(status: MigrationStatus): CheckLine {
  if (status.changed.length) {
    return fail(MIGRATIONS, `${list(status.changed)} changed after ${status.changed.length === 1 ? "it was" : "they were"} applied (checksum differs)`, "restore the committed migration files (git checkout prisma/); a change to the data model needs a new migration, never an edited one");
  }
  if (status.unfinished.length) {
    return fail(MIGRATIONS, `${list(status.unfinished)} started and never finished`, "inspect the database by hand, then mark it rolled back: npx prisma migrate resolve --rolled-back <name>");
  }
  if (status.unknown.length) {
    return fail(MIGRATIONS, `the database has ${plural(status.unknown.length, "migration")} this build of cairn does not: ${list(status.unknown)}`, "run the cairn version that applied them, or a newer one: this build is older than the database");
  }
  // Pending is the normal state of a new or older database, not a problem: cairn applies them
  // itself at start-up (replicas starting together take turns), so the doctor passes it.
  if (status.pending.length && status.applied.length === 0) return pass(MIGRATIONS, `a new database: all ${status.pending.length} will be applied at start`);
  if (status.pending.length) return pass(MIGRATIONS, `${plural(status.pending.length, "migration")} not applied yet (${list(status.pending)}): will be applied at start`);
  return pass(MIGRATIONS, `all ${status.applied.length} applied, none pending`);
}

/** The nearest folder that exists above `path`, and whether cairn could create the file there. */
function creatable(path: string): { dir: string; writable: boolean } {
  let dir = dirname(path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return { dir, writable: true };
  } catch {
    return { dir, writable: false };
  }
}

async function sqliteLines(url: string, timeoutMs: number): Promise<CheckLine[]> {
  const path = sqlitePath(url);
  if (path === ":memory:") return [pass(LABEL, "SQLite in memory: nothing is kept once cairn stops")];
  const migrations = loadMigrations("sqlite");
  if (!existsSync(path)) {
    const { dir, writable } = creatable(path);
    if (!writable) return [fail(LABEL, `no SQLite file at ${path}, and ${dir} is not writable`, "make the folder writable for the user cairn runs as, or set DATABASE_URL to a file in a writable folder")];
    // Nothing is created here: cairn creates the file (and its folders) at start.
    return [pass(LABEL, `SQLite ${path} does not exist yet: cairn creates it at start (${dir} is writable)`), migrationLine(compareMigrations(migrations, []))];
  }
  const { default: BetterSqlite3 } = await import("better-sqlite3");
  let db;
  try {
    // Read-only: the doctor must not create, migrate or checkpoint anything.
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: timeoutMs });
    const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'`).get();
    const rows = table ? (db.prepare(APPLIED_ROWS_SQL).all() as { migration_name: string; checksum: string; finished: unknown }[]) : [];
    return [pass(LABEL, `SQLite ${path}: opened`), migrationLine(compareMigrations(migrations, appliedRows(rows)))];
  } catch (err) {
    return [fail(LABEL, databaseProblem(url, err).replace(/\.$/, ""))];
  } finally {
    db?.close();
  }
}

/** host:port/database, without the user and password. */
function postgresPlace(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "the server in DATABASE_URL";
  }
}

async function postgresLines(url: string, timeoutMs: number, signal: AbortSignal): Promise<CheckLine[]> {
  const migrations = loadMigrations("postgresql");
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // An error on the idle connection (the server going away) must not end the doctor.
  client.on("error", () => {});
  const stop = (): void => void client.end().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  const started = Date.now();
  try {
    await client.connect();
    const present = await client.query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
    const rows = present.rows[0]?.present ? (await client.query<{ migration_name: string; checksum: string; finished: unknown }>(APPLIED_ROWS_SQL)).rows : [];
    return [pass(LABEL, `PostgreSQL ${postgresPlace(url)}: reachable (${seconds(Date.now() - started)})`), migrationLine(compareMigrations(migrations, appliedRows(rows)))];
  } catch (err) {
    return [fail(LABEL, databaseProblem(url, err).replace(/\.$/, ""))];
  } finally {
    signal.removeEventListener("abort", stop);
    await client.end().catch(() => {});
  }
}

export async function checkDatabase(url: string, timeoutMs: number, signal: AbortSignal): Promise<CheckLine[]> {
  let provider: Provider;
  try {
    provider = providerOf(url);
  } catch (err) {
    return [fail(LABEL, err instanceof Error ? err.message : String(err), "set DATABASE_URL to file:PATH (SQLite) or postgresql://USER@HOST:PORT/DB")];
  }
  return provider === "sqlite" ? sqliteLines(url, timeoutMs) : postgresLines(url, timeoutMs, signal);
}
