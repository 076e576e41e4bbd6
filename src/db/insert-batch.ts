/**
 * A single-row write sent as one multi-row statement when several arrive while earlier ones are
 * under way (group commit, ground/group-batch.ts): on PostgreSQL each statement is a round trip and
 * a commit, and in a burst (200 new conversations) those, not the rows, are what everyone waits on.
 *
 * `one` writes an item alone (a batch of one, and each item again when a batch failed: one item
 * refused by a constraint then fails alone); `many` writes a batch and returns rows that `rowKey`
 * matches to the items (`itemKey`). Items with the same key share what was written for the key, in
 * the batch's order: the first gets the first row, and so on; an item left without one gets the
 * last row of its key as `shareRow` makes it, when given (a find-or-make: one row for everyone who
 * asked, made by the first only), else null (an insert that did nothing on conflict). A lost
 * connection fails the batch, as it would fail one item alone.
 */
import { GroupBatch, type Settled } from "../ground/group-batch.ts";
import type { DirectSql, SqlParam } from "./direct.ts";
import type { Provider } from "./migrate.ts";
import { connectionLost } from "./pg-pool.ts";

/** Enough to take a burst in a few statements. */
const MAX_ITEMS = 100;
/**
 * Batches under way at once. PostgreSQL: one, and everything that arrives meanwhile goes as the
 * next (a burst's 600 messages in tens of statements, where four under way sent most alone);
 * SQLite, whose batches gather over a turn of the event loop instead, as before.
 */
const IN_FLIGHT = { queued: 1, gathered: 4 };

export interface InsertBatchSpec<I> {
  one: (item: I) => Promise<unknown[][]>;
  many: (items: readonly I[]) => Promise<unknown[][]>;
  rowKey: (row: readonly unknown[]) => string;
  itemKey: (item: I) => string;
  shareRow?: (row: unknown[]) => unknown[];
  /** Gather items over a turn of the event loop before a batch goes (SQLite: ground/group-batch.ts). */
  gather?: (then: () => void) => void;
  /**
   * Whether a batch's error means the connection was lost (the batch fails) rather than that an
   * item was refused (each is written again alone). PostgreSQL's rule unless given; SQLite has no
   * connection to lose.
   */
  lost?: (err: unknown) => boolean;
}

/**
 * How SQLite's batches go (`InsertBatchSpec`): a statement is a call, never under way for others to
 * queue behind, so items gather over a turn of the event loop; and no error is a lost connection.
 */
export const SQLITE_BATCHING = { gather: setImmediate, lost: () => false } satisfies Pick<InsertBatchSpec<unknown>, "gather" | "lost">;

/** The row written for an item (the first `one` returned, when alone), or null. */
export function insertBatch<I>(spec: InsertBatchSpec<I>): (item: I) => Promise<unknown[] | null> {
  const each = async (items: readonly I[]): Promise<Settled<unknown[] | null>[]> =>
    (await Promise.allSettled(items.map(spec.one))).map((r) => (r.status === "fulfilled" ? { ok: true, value: r.value[0] ?? null } : { ok: false, error: r.reason }));
  const lost = spec.lost ?? ((err: unknown) => connectionLost(err) !== undefined);
  const batch = new GroupBatch<I, unknown[] | null>(
    async (items) => {
      if (items.length === 1) return each(items);
      let rows: unknown[][];
      try {
        rows = await spec.many(items);
      } catch (err) {
        if (lost(err)) throw err;
        return each(items);
      }
      const byKey = new Map<string, unknown[][]>();
      for (const r of rows) {
        const k = spec.rowKey(r);
        byKey.set(k, [...(byKey.get(k) ?? []), r]);
      }
      const last = new Map<string, unknown[]>();
      return items.map((item) => {
        const k = spec.itemKey(item);
        const own = byKey.get(k)?.shift();
        if (own) {
          last.set(k, own);
          return { ok: true, value: own };
        }
        const earlier = last.get(k);
        return { ok: true, value: earlier && spec.shareRow ? spec.shareRow(earlier) : null };
      });
    },
    { maxItems: MAX_ITEMS, ...(spec.gather ? { maxInFlight: IN_FLIGHT.gathered, gather: spec.gather } : { maxInFlight: IN_FLIGHT.queued }) },
  );
  return (item) => batch.add(item);
}

/**
 * A batch's parameters for `unnest`: one array per column, each row's value at its index (rows
 * given as their single-row statement's parameters, all of one length).
 */
export function columnArrays(rows: readonly (readonly SqlParam[])[]): SqlParam[] {
  return (rows[0] ?? []).map((_, c) => rows.map((values) => values[c] as string | number | null));
}

/**
 * A batch's rows as one statement's parameters: PostgreSQL's `unnest` takes an array per column
 * (`columnArrays`), SQLite's `json_each` one JSON array of the rows. On SQLite one statement is the
 * point: FTS5 writes out its pending terms at every statement of a transaction (a savepoint), so a
 * batch of single-row inserts, each indexed by a trigger, cost 72 µs a message against 26 µs as
 * one statement (measured here, 1,200 messages, the schema's triggers and indexes).
 */
export function manyParams(provider: Provider, rows: readonly (readonly SqlParam[])[]): SqlParam[] {
  return provider === "postgresql" ? columnArrays(rows) : [JSON.stringify(rows)];
}

/**
 * SQLite: a single-row write whose statement returns its row (RETURNING), batched as that statement
 * for each item in one transaction (`DirectSql.each`), gathered over a turn of the event loop. A
 * commit (the WAL's write) costs more than the row: in a burst of new conversations, the new
 * people, conversations and sessions each committed alone. `key` reads the same key from an
 * item's parameters and from its row: an item whose statement wrote nothing (a conflict) gets null.
 */
export function sqliteWriteBatch(direct: Pick<DirectSql, "rows" | "each">, sql: string, key: { row: (row: readonly unknown[]) => string; item: (params: readonly SqlParam[]) => string }): (params: SqlParam[]) => Promise<unknown[] | null> {
  return insertBatch<SqlParam[]>({
    one: (params) => direct.rows(sql, params),
    many: async (items) => (await direct.each(sql, items)).flat(),
    rowKey: key.row,
    itemKey: key.item,
    ...SQLITE_BATCHING,
  });
}
