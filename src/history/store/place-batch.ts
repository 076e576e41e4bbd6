/**
 * People and conversations new at the same moment, found or made together on PostgreSQL (group
 * commit, db/insert-batch.ts): every new thread is a new conversation, and a burst of them (a
 * busy channel, 200 new conversations at once in the throughput bench) sent two statements and
 * two commits each. Alone, a row is found or made in one statement (rows.ts, `findOrInsert...`);
 * together, in one statement for up to 100. Each row found or made comes back with a last column
 * saying whether this statement made it; two asking for the same new row share it, made by the
 * first. A row another insert made between the find and the insert comes back for nobody: the
 * caller reads it (store.ts, `findOrInsert`).
 */
import type { DirectSql, SqlParam } from "../../db/direct.ts";
import { columnArrays, insertBatch } from "../../db/insert-batch.ts";
import type { HistorySql } from "./rows.ts";

/** A row found or made for these values (in the insert's column order), or null when another insert won. */
export type FindOrMake = (params: SqlParam[]) => Promise<unknown[] | null>;

export interface PlaceBatches {
  person: FindOrMake;
  conversation: FindOrMake;
}

type PlaceSql = Pick<HistorySql, "findOrInsertPerson" | "findOrInsertPersonMany" | "findOrInsertConversation" | "findOrInsertConversationMany">;

/** Null on SQLite, where a statement is a call, not a round trip. */
export function placeBatches(direct: DirectSql, sql: PlaceSql): PlaceBatches | null {
  const { findOrInsertPerson, findOrInsertPersonMany, findOrInsertConversation, findOrInsertConversationMany } = sql;
  if (!findOrInsertPerson || !findOrInsertPersonMany || !findOrInsertConversation || !findOrInsertConversationMany) return null;
  // The row a second asker shares was made by the first, not by it.
  const shareRow = (row: unknown[]): unknown[] => [...row.slice(0, -1), false];
  const batch = (one: string, many: string, key: (values: readonly unknown[]) => string): FindOrMake =>
    insertBatch<SqlParam[]>({
      one: (params) => direct.rows(one, params),
      many: (items) => direct.rows(many, columnArrays(items)),
      rowKey: key,
      itemKey: key,
      shareRow,
    });
  return {
    // Person rows and values: id, workspaceId, externalId, ...
    person: batch(findOrInsertPerson, findOrInsertPersonMany, (v) => `${String(v[1])}\u0000${String(v[2])}`),
    // Conversation rows and values: id, workspaceId, key, ...
    conversation: batch(findOrInsertConversation, findOrInsertConversationMany, (v) => String(v[2])),
  };
}
