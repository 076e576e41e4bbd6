/**
 * `column = value` as a condition checked on the rows a statement's index found, never used to find
 * them. A scope's columns (workspace, conversation) are in the statements that read a session or a
 * conversation's leases so that no row outside the scope is read, but an index on them must not draw
 * the planner off the index the statement is written for: with no statistics (a new database, a
 * table autovacuum has not analyzed yet) PostgreSQL took two equalities on the workspace index as
 * more selective than one on the session's, and read every message of the workspace per turn.
 *
 * SQLite: a column under unary `+` is not used by an index (its documented way). PostgreSQL: no
 * btree serves `IS NOT DISTINCT FROM`; on a NOT NULL column with a non-null value it is `=`.
 */
import type { Provider } from "./migrate.ts";

export function checkedOnRows(provider: Provider, column: string, value: string): string {
  return provider === "postgresql" ? `"${column}" IS NOT DISTINCT FROM ${value}` : `+${column} = ${value}`;
}
