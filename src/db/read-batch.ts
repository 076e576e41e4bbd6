/**
 * Reads asked while one is under way, sent together as one statement (group commit's read side,
 * ground/group-batch.ts): in a burst every new session reads its memory entries and every turn its
 * session, and each read alone is a round trip. For PostgreSQL, where a statement is a round trip.
 *
 * `one` reads an item as it would be read without a burst. A read alone goes that way, not as the
 * statement over arrays carrying one item: PostgreSQL planned that one afresh on every call (a plan
 * for one item looked cheaper than its cached plan for ten), 0.3-0.6 ms a quiet turn here.
 * `many` is the statement over arrays (`columnArrays` of each item's `params`); each of its rows
 * ends with its item's number, from 1 (`WITH ORDINALITY`), which is taken off.
 */
import { GroupBatch } from "../ground/group-batch.ts";
import type { DirectSql, SqlParam } from "./direct.ts";
import { columnArrays } from "./insert-batch.ts";

/** Items in one statement: a burst's in a few. */
const MAX_ITEMS = 100;

export interface ReadBatchSpec<I> {
  one: (item: I) => Promise<unknown[][]>;
  many: string;
  params: (item: I) => SqlParam[];
}

/**
 * `many` for a read written once for one item: the items' values as arrays (`values`: each one's
 * name and PostgreSQL type, in `params` order), and `single` that item's statement with each value
 * written as `v(name)`. Each item's rows are found as alone (a LATERAL subquery; OFFSET 0 keeps it
 * its own, planned by its indexes) and end with the item's number.
 */
export function lateralMany(values: readonly (readonly [name: string, type: string])[], single: (v: (name: string) => string) => string): string {
  const arrays = values.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ");
  const names = values.map(([name]) => name).join(", ");
  return `SELECT x.*, v.i FROM unnest(${arrays}) WITH ORDINALITY AS v(${names}, i) CROSS JOIN LATERAL (${single((name) => `v.${name}`)} OFFSET 0) x`;
}

/** An item's rows: alone when nothing is under way, else with the items that wait behind it. */
export function readBatch<I>(direct: Pick<DirectSql, "rows">, spec: ReadBatchSpec<I>): (item: I) => Promise<unknown[][]> {
  const batch = new GroupBatch<I, unknown[][]>(
    async (items) => {
      if (items.length === 1) return [{ ok: true, value: await spec.one(items[0]!) }];
      const rows = await direct.rows(spec.many, columnArrays(items.map(spec.params)));
      const each: unknown[][][] = items.map(() => []);
      for (const row of rows) each[Number(row[row.length - 1]) - 1]!.push(row.slice(0, -1));
      return each.map((value) => ({ ok: true, value }));
    },
    // One statement under way: everything asked meanwhile goes as the next.
    { maxItems: MAX_ITEMS, maxInFlight: 1 },
  );
  return (item) => batch.add(item);
}
