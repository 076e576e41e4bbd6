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
import { columnArrays, insertBatch, sqliteWriteBatch } from "../../db/insert-batch.ts";
import type { HistorySql } from "./rows.ts";

// Person rows and values: id, workspaceId, externalId, ...; conversation rows and values: id, workspaceId, key, ...
const personKey = (v: readonly unknown[]): string => `${String(v[1])}\u0000${String(v[2])}`;
const conversationKey = (v: readonly unknown[]): string => String(v[2]);

/** A row found or made for these values (in the insert's column order), or null when another insert won. */
export type FindOrMake = (params: SqlParam[]) => Promise<unknown[] | null>;

export interface PlaceBatches {
  person: FindOrMake;
  conversation: FindOrMake;
}

type PlaceSql = Pick<HistorySql, "findOrInsertPerson" | "findOrInsertPersonMany" | "findOrInsertConversation" | "findOrInsertConversationMany" | "insertPerson" | "insertConversation">;

/** Null on SQLite, where a statement is a call, not a round trip: there only the inserts go together (`placeInserts`). */
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
    person: batch(findOrInsertPerson, findOrInsertPersonMany, personKey),
    conversation: batch(findOrInsertConversation, findOrInsertConversationMany, conversationKey),
  };
}

/** A new row, or null when the row was there already (the caller finds it). */
export type Insert = (params: SqlParam[]) => Promise<unknown[] | null>;

/**
 * A new person's or conversation's insert, after a find saw none. SQLite: in one transaction with
 * those made at the same moment (db/insert-batch.ts); in a burst each committed alone. PostgreSQL
 * finds and makes in one statement (`placeBatches`), and inserts alone only without it.
 */
export function placeInserts(direct: DirectSql, sql: PlaceSql): { person: Insert; conversation: Insert } {
  const alone = (insert: string): Insert => async (params) => (await direct.rows(insert, params))[0] ?? null;
  if (sql.findOrInsertPerson) return { person: alone(sql.insertPerson), conversation: alone(sql.insertConversation) };
  return {
    person: sqliteWriteBatch(direct, sql.insertPerson, { row: personKey, item: personKey }),
    conversation: sqliteWriteBatch(direct, sql.insertConversation, { row: conversationKey, item: conversationKey }),
  };
}
