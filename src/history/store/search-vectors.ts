/**
 * The vector path of a search: the messages in the asker's scope nearest a query's vector, by cosine
 * similarity over the stored int8 vectors of one space (src/ground/vector.ts). Every candidate is
 * checked against the same scope clause as the word search (SQLITE_SCOPE / PG_SCOPE), inside the
 * statement that reads the vectors: a vector of a message the asker may not see is never compared.
 *
 * session_search's filters pick among the nearest; the spread they must stand out from is the whole
 * scope's: a filter that leaves three vectors leaves no spread to measure, and a weak match among
 * them would be shown as found by meaning.
 *
 * The scan is exact. SQLite computes the distance in the statement (sqlite-vec, or the JavaScript
 * stand-in of db/sqlite-vectors.ts) and returns the nearest rows. PostgreSQL without pgvector returns
 * the scoped vectors and the nearest are picked here, then read as rows (in scope again).
 */
import { cosine } from "../../ground/vector.ts";
import { narrow, PG_ROW, PG_SCOPE } from "./search-postgres.ts";
import { filterSql } from "./filter.ts";
import { SQLITE_ROW, SQLITE_SCOPE } from "./search-sqlite.ts";
import { parsed, run, scopeParams, type Ctx, type Row } from "./search-queries.ts";

/** A query's vector in a space (its int8 coding). */
export interface QueryVector {
  space: string;
  vector: Uint8Array;
}

/** Below this similarity a message is not near the query at all: left out rather than ranked last. */
export const MIN_SIMILARITY = 0.1;

/**
 * A message joins the fusion only when its similarity stands out from the rest of the scope's: this
 * many standard deviations above the others' mean. What similarity unrelated texts have differs by
 * model (0.1 for some, 0.5 for others), and a weak model ranks like a worse word search: fused as an
 * equal, it pulled the word ranking down (LoCoMo R@10 80.1 to 70.4 with hashed-word vectors), while
 * a message that stands out this far is near the query under any model (78.1 with the same vectors).
 */
export const STANDS_OUT = 3;
/** With fewer other vectors in scope there is no spread to stand out from: the nearest are all kept. */
const MIN_OTHERS = 4;

/** The `limit` messages in scope nearest `q` that stand out from the rest, nearest first. */
export async function nearestMessages(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  return ctx.database.provider === "sqlite" ? nearestSqlite(ctx, q, limit) : nearestPostgres(ctx, q, limit);
}

const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** Similarities of every vector scanned: how many, their sum and sum of squares. */
interface Spread {
  n: number;
  sum: number;
  squares: number;
}

/** Whether `sim` stands out from the others of `spread` (itself left out of the spread it is measured by). */
function standsOut(sim: number, spread: Spread): boolean {
  if (sim < MIN_SIMILARITY) return false;
  const n = spread.n - 1;
  if (n < MIN_OTHERS) return true;
  const mean = (spread.sum - sim) / n;
  const sd = Math.sqrt(Math.max(0, (spread.squares - sim * sim) / n - mean * mean));
  return sd > 0 ? (sim - mean) / sd >= STANDS_OUT : sim > mean;
}

async function nearestSqlite(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  // One scan: every scoped vector's similarity, the spread of all of them, and the nearest few
  // that session_search's filters let through (`ok`).
  const filter = filterSql("sqlite", ctx.filter, ctx.scope);
  const rows = await run(
    ctx,
    `WITH s AS MATERIALIZED (
       SELECT v.messageId AS id, 1 - vec_distance_cosine(vec_int8(v.vector), vec_int8(?)) AS sim, (1${filter.sql}) AS ok
         FROM "MessageVector" v
         JOIN "Message" m ON m.id = v.messageId
         JOIN "Conversation" c ON c.id = m.conversationId
        WHERE v.space = ? AND v.workspaceId = ? AND length(v.vector) = ? AND ${SQLITE_SCOPE}),
     spread AS (SELECT count(*) AS n, total(sim) AS t, total(sim * sim) AS q FROM s)
     SELECT json_group_array(json_array(${SQLITE_ROW}, near.sim) ORDER BY near.sim DESC, m.id DESC), spread.n, spread.t, spread.q
       FROM (SELECT * FROM s WHERE ok ORDER BY sim DESC LIMIT ?) near
       JOIN "Message" m ON m.id = near.id, spread`,
    // Placeholders in the order they stand: the query vector and the filter's (select list), then the scan's.
    asBuffer(q.vector),
    ...filter.params,
    q.space,
    ctx.scope.workspaceId,
    q.vector.length,
    ...scopeParams(ctx),
    limit,
  );
  const r = rows[0];
  const spread: Spread = { n: Number(r?.[1] ?? 0), sum: Number(r?.[2] ?? 0), squares: Number(r?.[3] ?? 0) };
  return parsed<[...Row, number]>(rows)
    .filter((row) => standsOut(row[7], spread))
    .map((row) => row.slice(0, 7) as unknown as Row);
}

async function nearestPostgres(ctx: Ctx, q: QueryVector, limit: number): Promise<Row[]> {
  const filter = await narrow(ctx, 7);
  const scoped = await run(
    ctx,
    `SELECT v."messageId", v.vector, (true${filter.sql}) AS ok
       FROM "MessageVector" v
       JOIN "Message" m ON m.id = v."messageId"
       JOIN "Conversation" c ON c.id = m."conversationId"
      WHERE ${PG_SCOPE(1)} AND v.space = $5 AND v."workspaceId" = $1 AND length(v.vector) = $6`,
    ...scopeParams(ctx),
    q.space,
    q.vector.length,
    ...filter.params,
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

/**
 * The `k` nearest of (id, vector, ok) rows that the filters let through (ok) and stand out from all
 * of them, nearest first (ties: newest first).
 */
function topK(rows: unknown[][], query: Uint8Array, k: number): { id: number; sim: number }[] {
  const all: { id: number; sim: number }[] = [];
  const spread: Spread = { n: rows.length, sum: 0, squares: 0 };
  for (const r of rows) {
    const sim = cosine(r[1] as Uint8Array, query);
    spread.sum += sim;
    spread.squares += sim * sim;
    if (r[2] === true) all.push({ id: Number(r[0]), sim });
  }
  return all
    .sort((a, b) => b.sim - a.sim || b.id - a.id)
    .slice(0, k)
    .filter((c) => standsOut(c.sim, spread));
}
