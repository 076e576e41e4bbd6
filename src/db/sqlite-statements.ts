/**
 * Compiled SQLite statements, kept. Prisma's better-sqlite3 adapter calls `prepare` for every query,
 * and compiling a statement costs about as much as running one of cairn's; cairn sends the same few
 * statement shapes on every message, so each is compiled once and reused (keyed by its SQL text).
 *
 * The adapter uses a prepared statement as `prepare(sql).bind(args)` and then `reader`, `run()`,
 * `columns()` and `raw().all()`. A better-sqlite3 statement can be bound only once, so the cache
 * hands out a small view that passes the arguments at each call instead of binding them.
 */
import BetterSqlite3 from "better-sqlite3";
import { memoize } from "../ground/cache/memoize.ts";

type Statement = BetterSqlite3.Statement<unknown[]>;

/** Enough for every statement shape cairn sends; a burst of one-off raw queries only evicts the oldest. */
const MAX_STATEMENTS = 500;

/** A compiled statement and, once asked, its result columns (fixed for a compiled statement). */
interface Compiled {
  stmt: Statement;
  columns?: BetterSqlite3.ColumnDefinition[];
}

class BoundStatement {
  private readonly stmt: Statement;

  constructor(
    private readonly compiled: Compiled,
    private readonly args: unknown[],
  ) {
    this.stmt = compiled.stmt;
  }

  get reader(): boolean {
    return this.stmt.reader;
  }

  bind(args: unknown[]): BoundStatement {
    return new BoundStatement(this.compiled, args);
  }

  run(): BetterSqlite3.RunResult {
    return this.stmt.run(this.args);
  }

  columns(): BetterSqlite3.ColumnDefinition[] {
    return (this.compiled.columns ??= this.stmt.columns());
  }

  raw(): { all(): unknown[] } {
    return { all: () => this.stmt.raw(true).all(this.args) };
  }
}

/** Makes `db.prepare` return cached statements. */
export function cacheStatements(db: BetterSqlite3.Database, max = MAX_STATEMENTS): void {
  const prepare = db.prepare.bind(db) as (sql: string) => Statement;
  const compiled = memoize((sql: string): Compiled => ({ stmt: prepare(sql) }), max);
  const cached = (sql: string): BoundStatement => new BoundStatement(compiled(sql), []);
  // The adapter only uses the members BoundStatement has. The direct path (direct.ts) shares the
  // connection but compiles its statements with the prototype's prepare, not through this one.
  db.prepare = cached as unknown as typeof db.prepare;
}
