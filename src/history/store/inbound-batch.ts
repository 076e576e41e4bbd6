/**
 * People's messages stored together on PostgreSQL when they arrive together (group commit,
 * ground/group-batch.ts): in a burst each statement is a round trip and a commit, and the driver's
 * work per statement, not the server's, is what a burst of new conversations waits on. One
 * conversation's messages are stored one at a time (turn/intake.ts), so a batch holds at most one
 * of each and ids still follow arrival within a conversation.
 *
 * A batch that fails (one row refused by a constraint, say) is stored again message by message,
 * so each message gets its own outcome, as if it had never been batched.
 */
import type { DirectSql, SqlParam } from "../../db/direct.ts";
import { connectionLost } from "../../db/pg-pool.ts";
import { GroupBatch, type Settled } from "../../ground/group-batch.ts";
import type { Message } from "../../db/generated/sqlite/client.ts";
import { MESSAGE_COLUMNS, messageParams, type HistorySql } from "./rows.ts";

/** Enough to take a burst in a few statements; the arrays of one batch stay well under a megabyte of text. */
const MAX_MESSAGES = 100;
/** Batches under way at once: the next one gathers while these wait for the database. */
const MAX_IN_FLIGHT = 4;

type Row = Omit<Message, "id">;

/** A stored message, or null when its conversation has that platform message already. */
export type InboundInsert = (m: Row) => Promise<Message | null>;

export function inboundBatch(direct: DirectSql, sql: Pick<HistorySql, "insertInbound" | "insertInboundMany">): InboundInsert {
  const one = async (m: Row): Promise<Message | null> => {
    const rows = await direct.rows(sql.insertInbound, messageParams("postgresql", m));
    return rows.length ? { id: Number(rows[0]![0]), ...m } : null;
  };
  const many = sql.insertInboundMany;
  if (!many) return one;
  const each = async (items: readonly Row[]): Promise<Settled<Message | null>[]> =>
    (await Promise.allSettled(items.map(one))).map((r) => (r.status === "fulfilled" ? { ok: true, value: r.value } : { ok: false, error: r.reason }));
  const batch = new GroupBatch<Row, Message | null>(
    async (items) => {
      if (items.length === 1) return each(items);
      let stored: unknown[][];
      try {
        stored = await direct.rows(many, columnsOf(items));
      } catch (err) {
        // The connection lost: whether the batch was stored is unknown, as for one message alone.
        if (connectionLost(err)) throw err;
        // One message refused fails the statement: each is stored alone and gets its own outcome.
        return each(items);
      }
      return matched(items, stored);
    },
    { maxItems: MAX_MESSAGES, maxInFlight: MAX_IN_FLIGHT },
  );
  return (m) => batch.add(m);
}

/** The batch's parameters: one array per column, each message's value at its index. */
function columnsOf(items: readonly Row[]): SqlParam[] {
  const params = items.map((m) => messageParams("postgresql", m));
  return MESSAGE_COLUMNS.map((_, c) => params.map((p) => p[c] as string | number | null));
}

/**
 * Each message's id, by its (conversation, platform id), the key a duplicate is skipped on. Two
 * messages of one batch with the same key: the first was stored, the second is the duplicate.
 */
function matched(items: readonly Row[], rows: readonly unknown[][]): Settled<Message | null>[] {
  const keyOf = (conversationId: unknown, platformId: unknown): string => `${String(conversationId)}\u0000${platformId === null ? "" : String(platformId)}`;
  const ids = new Map<string, number>();
  for (const r of rows) ids.set(keyOf(r[1], r[2]), Number(r[0]));
  return items.map((m) => {
    const key = keyOf(m.conversationId, m.platformId);
    const id = ids.get(key);
    if (id === undefined) return { ok: true, value: null };
    ids.delete(key);
    return { ok: true, value: { id, ...m } };
  });
}
