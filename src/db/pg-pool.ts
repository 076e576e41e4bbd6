/**
 * Two changes to pg-pool. A connection that dies while in use does not end the process (below). And
 * for every statement cairn sends to PostgreSQL (Prisma's adapter and the
 * direct path): a statement that fails does not cost its connection. pg-pool's `query` closes the
 * connection of any failed statement, so each unique violation, lock timeout or refused cast made
 * the next statement pay for a new server process and prepare its statements again (two replicas
 * storing each other's duplicates opened 197 connections in a 10-second load).
 */
import type pg from "pg";

/**
 * The error to release a client with: none after a statement's error (PostgreSQL answered, severity
 * ERROR: the connection is fine), the error itself when the connection may be gone (a socket error,
 * a FATAL from the server), so the pool closes it.
 */
export function connectionLost(err: unknown): Error | undefined {
  if (err === undefined) return undefined;
  // pg's DatabaseError: the server's severity and a five-character SQLSTATE (socket errors carry neither).
  const { severity, code } = err as { severity?: unknown; code?: unknown };
  const statementError = severity === "ERROR" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code);
  if (statementError && !STALE_STATEMENT.has(code)) return undefined;
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Errors of a statement prepared on this connection that no longer fits the schema ("cached plan
 * must not change result type" after a migration changed a column; a prepared statement gone):
 * pg keeps reusing the statement on that connection, so the connection is closed, and the next
 * one prepares it afresh.
 */
const STALE_STATEMENT = new Set(["0A000", "26000"]);

/** A statement's text, values and options; `rowMode: "array"` gives rows as arrays. */
export type StatementConfig = pg.QueryConfig & { rowMode?: "array" };

/** One statement on a pooled connection, given back to the pool unless the connection was lost. */
export async function statement(pool: pg.Pool, config: StatementConfig): Promise<pg.QueryResult> {
  const client = await pool.connect();
  let failure: unknown;
  try {
    return await client.query(config);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    client.release(connectionLost(failure));
  }
}

/**
 * The pool, its promise-form `query(config)` (the form Prisma's adapter uses) going through
 * `statement`; every other form (callbacks, streams) is pg-pool's own.
 */
export function keepConnectionsOnStatementErrors(pool: pg.Pool): pg.Pool {
  // pg emits 'error' on a client whose socket dies; the pool listens only while the client is
  // idle. Checked out (a statement or a transaction under way, when PostgreSQL goes away), nothing
  // listened, and the emit ended the process. The statement's own promise rejects with the same
  // error, and the caller handles that; this listener only keeps the emit from being fatal.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const query = (...args: unknown[]): unknown => {
    const [config] = args;
    const plain = args.length === 1 && typeof config === "object" && config !== null && !("submit" in config);
    return plain ? statement(pool, config as StatementConfig) : original(...args);
  };
  pool.query = query as typeof pool.query;
  return pool;
}
