/**
 * Statements sent to the driver itself, below Prisma: for the few statement shapes cairn sends on
 * every message and every search (store a message, read a session's turns, find the person and
 * conversation it comes from, save a session's snapshot, the search queries).
 * Prisma's client spends more CPU on each statement it sends (building and interpreting its query
 * plan, mapping the result) than SQLite spends running one of these, and these run on every message
 * and every search. Everything else stays on Prisma.
 *
 * Rules for what goes here: one statement, not part of a transaction (`exclusive` aside), rows read
 * by position.
 * SQLite statements wait at the connection's transaction gate like Prisma's own (so none joins a
 * transaction it is not part of) and run on the same connection; on PostgreSQL, short statements
 * (`rows`) are pipelined on a few connections of their own (pg-lanes.ts), searches (`scan`) and
 * `exclusive` take a connection from the pool Prisma uses.
 */
import { createHash } from "node:crypto";
import BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import type { Provider } from "./migrate.ts";
import type { TransactionGate } from "./sqlite-gate.ts";
import { memoize } from "../ground/cache/memoize.ts";
import { statement, type StatementConfig } from "./pg-pool.ts";
import type { PgLanes } from "./pg-lanes.ts";

/**
 * What a parameter may be: dates go in as text, formatted by `sqlTime` for the provider. An array
 * is PostgreSQL's only (pg sends it as an array literal, for `unnest`); SQLite has no arrays.
 */
export type SqlParam = string | number | null | Uint8Array | readonly (string | number | null)[];

export interface ScanOptions {
  /**
   * PostgreSQL: planned for its values each time it runs, not prepared. A prepared statement is
   * planned for its values at first, then, after five runs, often once for any values: a statement
   * whose best plan depends on them (a search narrowed by dates) then kept a plan that read every
   * match for every date.
   */
  planEach?: boolean;
}

export interface DirectSql {
  /**
   * Runs one statement and returns its rows as arrays, columns in the order selected (RETURNING
   * included). Placeholders: `?` on SQLite, `$1`... on PostgreSQL. Integers come back as numbers,
   * except PostgreSQL's bigint (a count, say), which pg reads as text.
   */
  rows(sql: string, params: readonly SqlParam[]): Promise<unknown[][]>;
  /**
   * `rows` for a statement that may take long (a search, a page of a backfill). On PostgreSQL
   * `rows` pipelines statements on a few shared connections (pg-lanes.ts), where a long one would
   * hold up every statement queued behind it; `scan` takes a pooled connection of its own.
   * SQLite: the same as `rows`.
   */
  scan(sql: string, params: readonly SqlParam[], opts?: ScanOptions): Promise<unknown[][]>;
  /**
   * Runs one statement as `rows` does, with no other `exclusive` call of the same `key` between the
   * moment it reads and the moment its writes are visible, in this process or any other sharing the
   * database: a check-then-write (an admission counted from earlier admissions) cannot race another.
   * PostgreSQL: a transaction-scoped advisory lock, then the statement, which reads (in READ
   * COMMITTED) everything committed before the lock was granted. SQLite: the statement alone, since
   * one statement is atomic and writes to one file are serialized.
   */
  exclusive(key: string, sql: string, params: readonly SqlParam[]): Promise<unknown[][]>;
  /**
   * Runs one statement once per parameter list, all in one transaction: the rows of each run, in
   * the lists' order, or an error and nothing written. A batch of single-row writes on SQLite
   * (db/insert-batch.ts), where a statement is a call but each transaction's commit (the WAL write,
   * the full-text index's flush) costs more than the row.
   */
  each(sql: string, paramLists: readonly (readonly SqlParam[])[]): Promise<unknown[][][]>;
  /**
   * Runs each statement once, in order, all in one transaction: the rows of each, or an error and
   * nothing written. For SQLite, which has no data-modifying CTE to write two tables in one
   * statement; on PostgreSQL write that statement instead (this is BEGIN, each, COMMIT: round trips).
   */
  chain(statements: readonly (readonly [sql: string, params: readonly SqlParam[]])[]): Promise<unknown[][][]>;
}

/**
 * A time as a parameter, written the way Prisma writes it, so rows written here and by Prisma
 * compare and sort alike: SQLite keeps ISO 8601 text with "+00:00"; PostgreSQL's timestamp columns
 * hold UTC without a zone, and an input's zone is ignored for them, so the UTC ISO text is exact.
 */
export function sqlTime(provider: Provider, at: Date): string {
  const iso = at.toISOString();
  return provider === "sqlite" ? `${iso.slice(0, -1)}+00:00` : iso;
}

/**
 * A time column (`column`: quoted, or an expression) as `rows` should select it, to be read back with
 * `new Date()`: PostgreSQL's timestamp as epoch milliseconds (its UTC value, whatever the session's
 * zone), SQLite's ISO 8601 text as it is.
 */
export function timeColumn(provider: Provider, column: string): string {
  return provider === "postgresql" ? `(extract(epoch FROM ${column}) * 1000)::float8` : column;
}

/** Enough for every statement shape sent here; more would mean something builds SQL per call. */
const MAX_STATEMENTS = 200;

/** A compiled SQLite statement run once: its rows when it returns any (RETURNING included), else none. */
function run(stmt: BetterSqlite3.Statement<unknown[]>, params: readonly SqlParam[]): unknown[][] {
  if (stmt.reader) return stmt.all(params) as unknown[][];
  stmt.run(params);
  return [];
}

/**
 * SQLite: compiled statements are kept (by SQL text) and read integers as numbers (Prisma's
 * adapter reads them as bigint, its own statements unaffected: the setting is per statement).
 */
export function sqliteDirect(connection: () => BetterSqlite3.Database, gate: TransactionGate): DirectSql {
  const statement = memoize((sql: string): BetterSqlite3.Statement<unknown[]> => {
    // The prototype's prepare: the connection's own is the adapter's cache (sqlite-statements.ts).
    const stmt = BetterSqlite3.prototype.prepare.call(connection(), sql) as BetterSqlite3.Statement<unknown[]>;
    stmt.safeIntegers(false);
    if (stmt.reader) stmt.raw(true);
    return stmt;
  }, MAX_STATEMENTS);
  const rows = async (sql: string, params: readonly SqlParam[]): Promise<unknown[][]> => {
    const wait = gate.pass();
    if (wait) await wait;
    return run(statement(sql), params);
  };
  const chain = async (statements: readonly (readonly [string, readonly SqlParam[]])[]): Promise<unknown[][][]> => {
    const wait = gate.pass();
    if (wait) await wait;
    // From here to COMMIT synchronously, as in `rows`: an await between the gate and the statement
    // would let a transaction of Prisma's begin first, and the statement would run inside it.
    const all = connection().transaction(() => statements.map(([sql, params]) => run(statement(sql), params)));
    return all();
  };
  const each = (sql: string, paramLists: readonly (readonly SqlParam[])[]) => chain(paramLists.map((params) => [sql, params] as const));
  return { rows, scan: rows, exclusive: (_key, sql, params) => rows(sql, params), each, chain };
}

/**
 * PostgreSQL: `lanes` for `rows` (none: the pool for everything), the pool Prisma's adapter uses for
 * `scan` and `exclusive`; rows as arrays. Statements are prepared (named by
 * their text's hash; a `scan` asked to plan each time is not) on each connection the first time it runs them: planning is a good part of a
 * search statement's time on the server, and a prepared statement is planned again only when
 * PostgreSQL finds its plan should change. (A connection pooler in front of PostgreSQL must then
 * keep prepared statements per client, as PgBouncer does from 1.21 with max_prepared_statements
 * set.)
 */
export function pgDirect(pool: pg.Pool, lanes: PgLanes | null = null): DirectSql {
  const nameOf = memoize((sql: string) => `cairn_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`, MAX_STATEMENTS);
  const config = (sql: string, params: readonly SqlParam[]): StatementConfig => ({ name: nameOf(sql), text: sql, values: params as unknown[], rowMode: "array" });
  // Not pool.query: see pg-pool.ts.
  const pooled = async (sql: string, params: readonly SqlParam[]): Promise<unknown[][]> => (await statement(pool, config(sql, params))).rows as unknown[][];
  const chain = (statements: readonly (readonly [string, readonly SqlParam[]])[]): Promise<unknown[][][]> =>
    inTransaction(pool, async (client) => {
      const out: unknown[][][] = [];
      for (const [sql, params] of statements) out.push((await client.query<unknown[]>(config(sql, params))).rows);
      return out;
    });
  return {
    async rows(sql, params) {
      if (!lanes) return pooled(sql, params);
      return (await lanes.query(config(sql, params))).rows as unknown[][];
    },
    scan: async (sql, params, opts) =>
      opts?.planEach ? ((await statement(pool, { text: sql, values: params as unknown[], rowMode: "array" })).rows as unknown[][]) : pooled(sql, params),
    exclusive: (key, sql, params) =>
      inTransaction(pool, async (client) => {
        // Held until COMMIT or ROLLBACK; 64-bit, so two keys rarely share a lock (and sharing one
        // would only make them wait for each other).
        await client.query({ name: "cairn_exclusive_lock", text: "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", values: [key] });
        return (await client.query<unknown[]>(config(sql, params))).rows;
      }),
    // PostgreSQL's batches are one statement over arrays (`unnest`); this is for a caller that has none.
    each: (sql, paramLists) => chain(paramLists.map((params) => [sql, params] as const)),
    chain,
  };
}

/** `work` on a pooled connection between BEGIN and COMMIT; rolled back if it throws. */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    // A connection that cannot roll back is closed, not given back to the pool mid-transaction.
    await client.query("ROLLBACK").catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
