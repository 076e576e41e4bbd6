/**
 * Messages stored together on PostgreSQL when they arrive together (group commit,
 * db/insert-batch.ts): people's messages, and cairn's replies. In a burst each statement is a
 * round trip and a commit (a WAL flush), and a burst of new conversations waits on those, not on
 * the server's work per row. One conversation's messages are stored one at a time (turn/intake.ts)
 * and its turns run one at a time, so a batch holds at most one message and one reply of each: ids
 * still follow arrival within a conversation.
 *
 * A batch that fails (one row refused by a constraint, say) is stored again message by message, so
 * each gets its own outcome, as if it had never been batched; a lost connection fails the batch, as
 * it would fail one message alone (whether it was stored is unknown either way).
 */
import type { DirectSql, SqlParam } from "../../db/direct.ts";
import { columnArrays, insertBatch } from "../../db/insert-batch.ts";
import type { Message } from "../../db/generated/sqlite/client.ts";
import { messageParams, type HistorySql } from "./rows.ts";

type Row = Omit<Message, "id">;

/** A stored message, or null when it was not stored (a duplicate; a reply whose turn was taken over). */
export type MessageInsert = (m: Row) => Promise<Message | null>;

export interface MessageBatches {
  /** A person's message; null when its conversation has that platform message already. */
  inbound: MessageInsert;
  /** A reply; its id. */
  reply: (m: Row) => Promise<Message>;
  /** A reply stored only while the message it answers is leased to `owner`; null otherwise. */
  heldReply: (m: Row, owner: string) => Promise<Message | null>;
}

type BatchSql = Pick<HistorySql, "insertInbound" | "insertInboundMany" | "insertMessage" | "insertReplyMany" | "insertHeldReply" | "insertHeldReplyMany">;

/** PostgreSQL's batches; null on SQLite (no `...Many` statements), where a statement is a call, not a round trip. */
export function messageBatches(direct: DirectSql, sql: BatchSql): MessageBatches | null {
  const { insertInboundMany, insertReplyMany, insertHeldReplyMany } = sql;
  if (!insertInboundMany || !insertReplyMany || !insertHeldReplyMany) return null;
  const stored = (m: Row, rows: unknown[][]): Message | null => (rows[0] ? { id: Number(rows[0][0]), ...m } : null);
  const inbound = batched(
    async (m: Row) => stored(m, await direct.rows(sql.insertInbound, messageParams("postgresql", m))),
    (items) => direct.rows(insertInboundMany, columnsOf(items)),
    // The key a duplicate is skipped on: two of one batch with the same key, the first is stored.
    (conversationId, platformId) => `${String(conversationId)}\u0000${platformId === null ? "" : String(platformId)}`,
    (m) => [m.conversationId, m.platformId],
  );
  const plain = batched(
    async (m: Row) => stored(m, await direct.rows(sql.insertMessage, messageParams("postgresql", m))),
    (items) => direct.rows(insertReplyMany, columnsOf(items)),
    (replyToId) => String(replyToId),
    (m) => [m.replyToId],
  );
  // One batch per lease owner (a process has one): the statement checks every row's lease against it.
  const held = new Map<string, MessageInsert>();
  const heldBy = (owner: string): MessageInsert => {
    let insert = held.get(owner);
    if (!insert) {
      insert = batched(
        async (m: Row) => stored(m, await direct.rows(sql.insertHeldReply, [...messageParams("postgresql", m), m.replyToId, owner])),
        (items) => direct.rows(insertHeldReplyMany, [...columnsOf(items), owner]),
        (replyToId) => String(replyToId),
        (m) => [m.replyToId],
      );
      held.set(owner, insert);
    }
    return insert;
  };
  return {
    inbound,
    reply: async (m) => {
      const r = await plain(m);
      if (!r) throw new Error("a reply's insert returned no id");
      return r;
    },
    heldReply: (m, owner) => heldBy(owner)(m),
  };
}

/**
 * A message insert batched (db/insert-batch.ts): `one` stores a message alone, `many` a batch,
 * returning the id first and then the columns `key` reads, which `keyOf` reads from a message.
 */
function batched(
  one: MessageInsert,
  many: (items: readonly Row[]) => Promise<unknown[][]>,
  key: (...columns: unknown[]) => string,
  keyOf: (m: Row) => unknown[],
): MessageInsert {
  const insert = insertBatch<Row>({
    one: async (m) => {
      const stored = await one(m);
      return stored ? [[stored.id, ...keyOf(m)]] : [];
    },
    many,
    rowKey: (row) => key(...row.slice(1)),
    itemKey: (m) => key(...keyOf(m)),
  });
  return async (m) => {
    const row = await insert(m);
    return row ? { id: Number(row[0]), ...m } : null;
  };
}

/** A batch's parameters: one array per column (db/insert-batch.ts). */
const columnsOf = (items: readonly Row[]): SqlParam[] => columnArrays(items.map((m) => messageParams("postgresql", m)));
