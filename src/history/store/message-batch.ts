/**
 * Messages stored together when they arrive together (group commit, db/insert-batch.ts): people's
 * messages, and cairn's replies. In a burst each transaction costs more than its row: on
 * PostgreSQL a statement is a round trip and a commit (a WAL flush), and a batch is one statement
 * over arrays; on SQLite a commit writes the WAL and each statement the full-text index's pending
 * terms as a segment of their own, and a batch is one statement over a JSON array of the rows
 * (gathered over one turn of the event loop: a SQLite statement is never under way for others to
 * queue behind). One conversation's messages are stored one at a time (turn/intake.ts)
 * and its turns run one at a time, so a batch holds at most one message and one reply of each: ids
 * still follow arrival within a conversation.
 *
 * A batch that fails (one row refused by a constraint, say) is stored again message by message, so
 * each gets its own outcome, as if it had never been batched; a lost connection fails the batch, as
 * it would fail one message alone (whether it was stored is unknown either way).
 */
import type { DirectSql, SqlParam } from "../../db/direct.ts";
import { insertBatch, manyParams, SQLITE_BATCHING } from "../../db/insert-batch.ts";
import type { Provider } from "../../db/migrate.ts";
import type { Message } from "../../db/generated/sqlite/client.ts";
import { messageParams, type HistorySql } from "./rows.ts";
import { memoize } from "../../ground/cache/memoize.ts";

/** Lease owners a process batches for: its own (a test's stores may play several). */
export const LEASE_OWNERS = 16;

type Row = Omit<Message, "id">;

/** A stored message, or null when it was not stored (a duplicate; a reply whose turn was taken over). */
export type MessageInsert = (m: Row) => Promise<Message | null>;

export interface MessageBatches {
  /** A person's message; null when its conversation has that platform message already. */
  inbound: MessageInsert;
  /** A reply (or a post of cairn's own); its id. A unique violation throws as the driver reports it. */
  reply: (m: Row) => Promise<Message>;
  /** A reply stored only while the message it answers is leased to `owner`; null otherwise. */
  heldReply: (m: Row, owner: string) => Promise<Message | null>;
}

type BatchSql = Pick<HistorySql, "insertInbound" | "insertInboundMany" | "insertMessage" | "insertReplyMany" | "insertHeldReply" | "insertHeldReplyMany">;

/** `onStored`: told after each message stored (SQLite indexes history soon after: history-index-sqlite.ts). */
export function messageBatches(direct: DirectSql, sql: BatchSql, provider: Provider, onStored: () => void): MessageBatches {
  const params = (m: Row): SqlParam[] => messageParams(provider, m);
  /**
   * One kind of insert, batched (db/insert-batch.ts): `single` alone with `singleParams`; a batch as
   * `many`, one statement over the messages' rows (`manyParams`, then `extra`). Rows are matched to
   * messages by `key`: a batch returns the id and then the columns of the key, `keyOf` reads them
   * from a message.
   */
  const kind = (single: string, singleParams: (m: Row) => SqlParam[], many: string, extra: SqlParam[], key: (...columns: unknown[]) => string, keyOf: (m: Row) => unknown[]): MessageInsert => {
    const keyed = (m: Row, rows: unknown[][]): unknown[][] => (rows[0] ? [[rows[0][0], ...keyOf(m)]] : []);
    const insert = insertBatch<Row>({
      one: async (m) => keyed(m, await direct.rows(single, singleParams(m))),
      many: (items) => direct.rows(many, [...manyParams(provider, items.map(params)), ...extra]),
      rowKey: (row) => key(...row.slice(1)),
      itemKey: (m) => key(...keyOf(m)),
      ...(provider === "sqlite" ? SQLITE_BATCHING : {}),
    });
    return async (m) => {
      const row = await insert(m);
      if (!row) return null;
      onStored();
      return { id: Number(row[0]), ...m };
    };
  };
  // The key a duplicate is skipped on: two of one batch with the same key, the first is stored.
  const inbound = kind(
    sql.insertInbound,
    params,
    sql.insertInboundMany,
    [],
    (conversationId, platformId) => `${String(conversationId)}\u0000${platformId === null ? "" : String(platformId)}`,
    (m) => [m.conversationId, m.platformId],
  );
  const byReplyTo = (replyToId: unknown): string => String(replyToId);
  const replyKey = (m: Row): unknown[] => [m.replyToId];
  const plain = kind(sql.insertMessage, params, sql.insertReplyMany, [], byReplyTo, replyKey);
  // One batch per lease owner (a process has one): the statement checks every row's lease against it.
  const heldBy = memoize(
    (owner: string): MessageInsert => kind(sql.insertHeldReply, (m) => [...params(m), m.replyToId, owner], sql.insertHeldReplyMany, [owner], byReplyTo, replyKey),
    LEASE_OWNERS,
  );
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

