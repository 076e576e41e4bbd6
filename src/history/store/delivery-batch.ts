/**
 * Replies' posts recorded (HistoryStore.recordDeliveries): each reply's platform id set and a
 * Delivery row written per posted part, all or nothing per reply. On PostgreSQL the posts of
 * replies that arrive together go as one statement (group commit, db/insert-batch.ts): in a burst
 * every conversation's reply is posted at once, and one statement each queued the conversations'
 * next reads behind them on the shared connections. On SQLite, two statements per reply (the
 * platform id, then the rows), the replies posted over one turn of the event loop in one
 * transaction (DirectSql.chain): a statement there is a call, but each commit writes the WAL. A
 * batch that fails (one reply refused) is recorded again reply by reply, each with its own outcome.
 */
import { cuid } from "../../db/cuid.ts";
import { sqlTime, type DirectSql, type SqlParam } from "../../db/direct.ts";
import { insertBatch, SQLITE_BATCHING, type InsertBatchSpec } from "../../db/insert-batch.ts";
import type { Provider } from "../../db/migrate.ts";
import type { HistorySql } from "./rows.ts";

/** One reply's post: where it went and the platform's id of each part, first part first. */
export interface PostedReply {
  conversationId: string;
  replyId: number;
  channelId: string;
  platformIds: readonly string[];
}

/** Records a post; false when the conversation has no such reply (nothing is written then). */
export type DeliveryWrite = (posted: PostedReply) => Promise<boolean>;

interface Rows {
  ids: string[];
  at: string;
}

export function deliveryWrites(direct: DirectSql, sql: HistorySql["recordDeliveries"], provider: Provider): DeliveryWrite {
  const rowsOf = (p: PostedReply): Rows => ({ ids: p.platformIds.map(() => cuid()), at: sqlTime(provider, new Date()) });
  // Either way a row per delivery written, its reply's id first.
  const write = insertBatch<Item>({ ...("one" in sql ? pgSpec(direct, sql) : sqliteSpec(direct, sql)), rowKey: (row) => String(row[0]), itemKey: (p) => String(p.replyId) });
  return async (p) => (await write({ ...p, ...rowsOf(p) })) !== null;
}

type Item = PostedReply & Rows;
type Spec = Pick<InsertBatchSpec<Item>, "one" | "many" | "gather" | "lost">;

/** SQLite: each reply's two statements, the replies gathered over a turn of the event loop in one transaction. */
function sqliteSpec(direct: DirectSql, sql: { update: string; insert: string }): Spec {
  const statements = (p: Item): (readonly [string, SqlParam[]])[] => [
    [sql.update, [p.platformIds[0]!, p.replyId, p.conversationId]],
    [sql.insert, [p.channelId, p.at, JSON.stringify(p.ids.map((id, i) => [id, p.platformIds[i]])), p.replyId, p.conversationId]],
  ];
  // The inserts' rows (every second statement's).
  const written = (results: unknown[][][]): unknown[][] => results.filter((_, i) => i % 2 === 1).flat();
  return {
    one: async (p) => written(await direct.chain(statements(p))),
    many: async (items) => written(await direct.chain(items.flatMap(statements))),
    ...SQLITE_BATCHING,
  };
}

/** PostgreSQL: a reply alone as `one`, those waiting behind it as `many` over their parts. */
function pgSpec(direct: DirectSql, sql: { one: string; many: string }): Spec {
  const one = (p: Item): Promise<unknown[][]> => direct.rows(sql.one, [p.platformIds[0]!, p.replyId, p.conversationId, p.channelId, p.ids, [...p.platformIds], p.at]);
  // One row of the arrays per part of each reply (part 0 sets the reply's platform id).
  const many = (items: readonly Item[]): Promise<unknown[][]> => {
    const columns: (string | number)[][] = [[], [], [], [], [], [], []];
    for (const p of items) {
      p.platformIds.forEach((pid, part) => {
        const row = [p.replyId, p.conversationId, p.channelId, p.ids[part]!, pid, p.at, part];
        row.forEach((v, c) => columns[c]!.push(v));
      });
    }
    const params: SqlParam[] = columns;
    return direct.rows(sql.many, params);
  };
  return { one, many };
}
