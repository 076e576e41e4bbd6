/**
 * The vector path of a search: the messages in the asker's scope nearest a query's vector, by cosine
 * similarity over the stored int8 vectors of one space (src/ground/vector.ts). Every candidate is
 * checked against the same scope clause as the word search (SQLITE_SCOPE / PG_SCOPE), inside the
 * statement that reads the vectors: a vector of a message the asker may not see is never compared.
 *
 * The scan is exact. SQLite computes the distance in the statement (sqlite-vec, or the JavaScript
 * stand-in of db/sqlite-vectors.ts) and returns the nearest rows. PostgreSQL without pgvector returns
 * the scoped vectors and the nearest are picked here, then read as rows (in scope again).
 */
import { cosine } from "../../ground/vector.ts";
import { PG_ROW, PG_SCOPE } from "./search-postgres.ts";
import { SQLITE_ROW, SQLITE_SCOPE } from "./search-sqlite.ts";
import { parsed, run, scopeParams, type Ctx, type Row } from "./search-queries.ts";

/** A query's vector in a space (its int8 coding). */
export interface QueryVector {
  space: string;
  vector: Uint8Array;
}

/** Below this similarity a message is not near the query at all: left out rather than ranked last. */
export const MIN_SIMILARITY = 0.1;

/** The `limit` messages in scope nearest `q`, nearest first. */
export async function nearestMessages(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  return ctx.database.provider === "sqlite" ? nearestSqlite(ctx, q, limit) : nearestPostgres(ctx, q, limit);
}

const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

async function nearestSqlite(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  const rows = await run(
    ctx,
    `SELECT json_group_array(json_array(${SQLITE_ROW}) ORDER BY d, m.id DESC) FROM (
       SELECT v.messageId AS id, vec_distance_cosine(vec_int8(v.vector), vec_int8(?)) AS d
         FROM "MessageVector" v
         JOIN "Message" m ON m.id = v.messageId
         JOIN "Conversation" c ON c.id = m.conversationId
        WHERE v.space = ? AND v.workspaceId = ? AND length(v.vector) = ? AND ${SQLITE_SCOPE}
        ORDER BY d LIMIT ?) near
     JOIN "Message" m ON m.id = near.id
    WHERE near.d <= ?`,
    asBuffer(q.vector),
    q.space,
    ctx.scope.workspaceId,
    q.vector.length,
    ...scopeParams(ctx),
    limit,
    1 - MIN_SIMILARITY,
  );
  return parsed<Row>(rows);
}

async function nearestPostgres(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  const scoped = await run(
    ctx,
    `SELECT v."messageId", v.vector
       FROM "MessageVector" v
       JOIN "Message" m ON m.id = v."messageId"
       JOIN "Conversation" c ON c.id = m."conversationId"
      WHERE ${PG_SCOPE(1)} AND v.space = $5 AND v."workspaceId" = $1 AND length(v.vector) = $6`,
    ...scopeParams(ctx),
    q.space,
    q.vector.length,
  );
  const best = topK(scoped, q.vector, limit);
  if (best.length === 0) return [];
  const rows = await run(
    ctx,
    `SELECT json_agg(json_build_array(${PG_ROW}))::text FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
      WHERE m.id IN (SELECT json_array_elements_text($5::json)::int) AND ${PG_SCOPE(1)}`,
    ...scopeParams(ctx),
    JSON.stringify(best.map((b) => b.id)),
  );
  const order = new Map(best.map((b, i) => [b.id, i]));
  return parsed<Row>(rows).sort((a, b) => order.get(a[0])! - order.get(b[0])!);
}

/** The `k` nearest of (id, vector) rows at MIN_SIMILARITY or more, nearest first (ties: newest first). */
function topK(rows: unknown[][], query: Uint8Array, k: number): { id: number; sim: number }[] {
  const out: { id: number; sim: number }[] = [];
  for (const r of rows) {
    const sim = cosine(r[1] as Uint8Array, query);
    if (sim >= MIN_SIMILARITY) out.push({ id: Number(r[0]), sim });
  }
  return out.sort((a, b) => b.sim - a.sim || b.id - a.id).slice(0, k);
}
