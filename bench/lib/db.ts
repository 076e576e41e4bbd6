/**
 * The database a benchmark runs on. DATABASE_URL picks the provider: unset or `file:...` is SQLite
 * on a fresh temporary file per benchmark (never the file named, which may hold real data);
 * `postgresql://...` names a server where a temporary database is created and then dropped.
 *
 * Benchmarks that count queries get the database openDatabase opens, with its driver adapter
 * wrapped (`instrument`) to count every SQL statement it sends (queryRaw/executeRaw, inside
 * transactions too): the adapter is where each statement really leaves.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openDatabase, providerOf, type Database } from "../../src/db/client.ts";
import type { Provider } from "../../src/db/migrate.ts";

export interface BenchDatabase {
  database: Database;
  provider: Provider;
  /** The URL the benchmark's database has (a temp file or a temp PostgreSQL database). */
  url: string;
  /** Statements sent so far, when opened with `countQueries` (else always 0). */
  queries: () => number;
  close(): Promise<void>;
}

export function benchProvider(): Provider {
  const url = process.env.DATABASE_URL;
  return url ? providerOf(url) : "sqlite";
}

/** Redacts a password in a URL for printing. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

export async function openBenchDatabase(tag: string, opts: { countQueries?: boolean } = {}): Promise<BenchDatabase> {
  const provider = benchProvider();
  let url: string;
  let drop: () => Promise<void>;
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), `cairn-bench-${tag}-`));
    url = `file:${join(dir, "bench.db")}`;
    drop = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    ({ url, drop } = await tempPostgres(process.env.DATABASE_URL!, tag));
  }
  const counter = { n: 0 };
  const database = await openDatabase(url, opts.countQueries ? { instrument: (factory) => counting(factory, counter) } : {});
  // Migrations and set-up ran through the counting adapter too; count from here.
  counter.n = 0;
  return { database, provider, url, queries: () => counter.n, close: async () => void (await database.close(), await drop()) };
}

/** A temporary database on the server of `adminUrl` (a user who may create databases): its URL and how to drop it. */
export async function tempPostgres(adminUrl: string, tag: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `cairn_bench_${tag}_${randomBytes(4).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** Null when a connection to `url` answers, else why not. */
export async function postgresProblem(url: string): Promise<string | null> {
  try {
    await adminQuery(url, "SELECT 1", 3_000);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

async function adminQuery(url: string, sql: string, connectionTimeoutMillis?: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, ...(connectionTimeoutMillis ? { connectionTimeoutMillis } : {}) });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

type Fn = (...args: unknown[]) => unknown;

/**
 * Wraps a driver adapter factory so every statement is counted: the factory's connect(), the
 * adapter's startTransaction() and their queryRaw/executeRaw/executeScript; and the direct path's
 * rows() and scan(), and each() and chain() as the statements they run.
 */
function counting<T extends object>(target: T, counter: { n: number }): T {
  return new Proxy(target, {
    get(t, prop) {
      const v: unknown = Reflect.get(t, prop, t);
      if (typeof v !== "function") return v;
      const fn = v as Fn;
      if (prop === "queryRaw" || prop === "executeRaw" || prop === "executeScript" || prop === "rows" || prop === "scan") {
        return (...args: unknown[]) => {
          counter.n++;
          if (!process.env.BENCH_SQL_LOG) return fn.apply(t, args);
          // Each statement with when it was sent and how long it took: where a turn's time goes.
          const sql = JSON.stringify(typeof args[0] === "string" ? args[0] : ((args[0] as { sql?: string }).sql ?? "")).slice(0, 160);
          const t0 = performance.now();
          const done = () => process.stderr.write(`SQL at ${t0.toFixed(2)} took ${(performance.now() - t0).toFixed(2)} ms ${sql}\n`);
          const out = fn.apply(t, args);
          if (out instanceof Promise) void out.then(done, done);
          else done();
          return out;
        };
      }
      if (prop === "each" || prop === "chain") {
        // As the statements it runs: one per parameter list (`each`), one per statement (`chain`).
        const runs = prop === "each" ? 1 : 0;
        return (...args: unknown[]) => {
          counter.n += Array.isArray(args[runs]) ? (args[runs] as unknown[]).length : 1;
          return fn.apply(t, args);
        };
      }
      if (prop === "connect" || prop === "startTransaction") {
        return async (...args: unknown[]) => counting((await fn.apply(t, args)) as object, counter);
      }
      return fn.bind(t);
    },
  });
}
