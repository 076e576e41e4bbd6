/**
 * The search statements on PostgreSQL: candidates from the english tsvector (`search`) and the CJK
 * character tsvector (`cjk`), and neighbours and counts in scope.
 */
import type { SqlParam } from "../../db/direct.ts";
import { conversationFilterSql, filterSql, type FilterSql } from "./filter.ts";
import { chatParams, DF_CAP, idBounds, RECENT_WINDOW, displayOf, knowledgeParams, n, parsed, peopleOf, readsKnowledge, run, scopeParams, type Ctx, type NeighbourRow, type Queries, type Row } from "./search-queries.ts";

/**
 * PostgreSQL's form of SQLite's `neighbourArms` (search-sqlite.ts), for the same rows: one index
 * scan per anchor and side, reading `window` ids, where the arms seek once per distance (and skip
 * k - 1 entries to reach the k-th).
 */
function lateralArms(window: number): string {
  const side = (op: "<" | ">", order: "DESC" | "ASC", sign: "-" | "") =>
    `SELECT a.anchor, ${sign}n.n::int AS dir, n.id FROM a CROSS JOIN LATERAL (
       SELECT id, row_number() OVER (ORDER BY id ${order}) AS n
         FROM (SELECT id FROM "Message" WHERE "conversationId" = a.conv AND id ${op} a.anchor ORDER BY id ${order} LIMIT ${window}) s) n`;
  return `${side("<", "DESC", "-")} UNION ALL ${side(">", "ASC", "")}`;
}

/** pg placeholders for the scope (scopeParams: workspace, person, readable, exclude), numbered from `from`. */
export const PG_SCOPE = (from: number): string =>
  `m."workspaceId" = $${from} AND ${visibleConversation(`$${from + 1}`, `$${from + 2}`)} AND (m."sessionId" IS NULL OR m."sessionId" <> $${from + 3}) AND m.status <> 'failed'`;

/**
 * A conversation the asker may see: a chat one that is no DM or is theirs; a listened channel's
 * knowledge only if the channel is among those they can read (a JSON array).
 */
function visibleConversation(person: string, readable: string): string {
  return `(CASE WHEN c.kind <> 'channel' THEN (c."isDm" = false OR c."ownerId" = ${person}) ELSE c."channelId" IN (SELECT json_array_elements_text(${readable}::json)) END)`;
}
/**
 * History in scope (params chatParams: workspace, person, session left out), written so the
 * planner takes the partial GIN index of history (`role <> 'channel'`), whose first column is the
 * workspace: the index yields only this workspace's matches (search_index_by_scope migration).
 */
const PG_CHAT_SCOPE = `m."workspaceId" = $1 AND m.role <> 'channel' AND (c."isDm" = false OR c."ownerId" = $2) AND (m."sessionId" IS NULL OR m."sessionId" <> $3) AND m.status <> 'failed'`;
/**
 * Channel knowledge in scope (params knowledgeParams: workspace, readable channels), on its own
 * partial GIN index, whose first column is the conversation: one index look per readable channel.
 */
const PG_KNOWLEDGE_SCOPE = `m."workspaceId" = $1 AND m.role = 'channel' AND c.kind = 'channel' AND c."channelId" IN (SELECT json_array_elements_text($2::json)) AND m.status <> 'failed'`;

interface Source {
  scope: string;
  params: (ctx: Ctx) => SqlParam[];
  /** Read newest first, its ranking bounded to the newest RECENT_WINDOW matches (search-queries.ts). */
  recent?: boolean;
}
const CHAT: Source = { scope: PG_CHAT_SCOPE, params: chatParams };
const KNOWLEDGE: Source = { scope: PG_KNOWLEDGE_SCOPE, params: knowledgeParams, recent: true };
/** History and channel knowledge: the knowledge index only for someone who can read a listened channel. */
const wordSources = (ctx: Ctx): Source[] => (readsKnowledge(ctx) ? [CHAT, KNOWLEDGE] : [CHAT]);

/**
 * Channel knowledge's candidates, newest first, channel by channel: for each readable channel's
 * conversation, its newest matches through the (conversationId, id) index read backwards (or, for
 * rare words, its partial GIN index of (conversation, words), as the planner judges), then the
 * newest (or, `ranked`, the best of the newest RECENT_WINDOW, shared among the channels) across
 * them. A query over all the channels at once could not read in id order and fetched every match
 * (about 2 s a statement with a million kept messages).
 * When every word is `common` (counted to DF_CAP), the message's workspace and role are checked
 * after each channel's LIMIT, not inside it: a channel conversation holds only its workspace's kept
 * messages, but the planner multiplied those filters' selectivities as if independent, expected
 * fewer matches than the LIMIT, and read and sorted every message of each channel (0.5 s at 10,000
 * a channel) instead of the newest few hundred.
 */
async function recentKnowledge(ctx: Ctx, words: string[], limit: number, ranked: boolean, common: boolean): Promise<Row[]> {
  const channels = (JSON.parse(ctx.readable) as unknown[]).length;
  const each = ranked ? Math.max(100, Math.ceil(RECENT_WINDOW / Math.max(1, channels))) : limit;
  // Common words: workspace and role after each channel's LIMIT (see above); rarer ones: inside it,
  // where they let the planner take the partial GIN index of channel knowledge.
  const inside = common ? "" : `AND m."workspaceId" = $1 AND m.role = 'channel'`;
  const filter = await narrow(ctx, 6);
  // A channel filter picks the channels read, besides each message.
  const channel = conversationFilterSql("postgresql", ctx.filter, ctx.scope, "c.id", 6 + filter.params.length);
  const rows = await run(
    ctx,
    `SELECT json_agg(r ORDER BY ${ranked ? "rk DESC, " : ""}id DESC)::text AS j FROM (
       SELECT x.r, x.id${ranked ? ", x.rk" : ""}
         FROM (SELECT c.id AS cid FROM "Conversation" c
                WHERE c."workspaceId" = $1 AND c.kind = 'channel' AND c."channelId" IN (SELECT json_array_elements_text($2::json))${channel.sql}) k
         CROSS JOIN LATERAL (
           SELECT json_build_array(${PG_ROW}) AS r, m.id, m."workspaceId" AS ws, m.role${ranked ? ", ts_rank_cd(m.search, q) AS rk" : ""}
             FROM "Message" m CROSS JOIN to_tsquery('english', $3) q
            WHERE m."conversationId" = k.cid AND m.search @@ q ${inside} AND m.status <> 'failed'${filter.sql}
            ORDER BY m.id DESC LIMIT $5) x
        WHERE x.ws = $1 AND x.role = 'channel'
        ORDER BY ${ranked ? "x.rk DESC, " : ""}x.id DESC LIMIT $4) y`,
    ...knowledgeParams(ctx),
    words.join(" | "),
    limit,
    each,
    ...filter.params,
    ...channel.params,
  );
  return parsed<Row>(rows);
}

/**
 * Any `limit` of a source's matches in scope (unranked: whether they all fit is what the search
 * asks). A MATERIALIZED CTE is planned for all its rows, so it reads the partial GIN index; under a
 * plain LIMIT the planner took a sequential scan, expecting matches spread evenly, and with a
 * million kept messages in the table it read them all for a word history has rarely or never
 * (70-150 ms, and the scan's start moves with synchronized scans). Rows are pulled from the CTE
 * as the LIMIT needs them.
 */
async function anyMatches(ctx: Ctx, source: Source, words: string[], limit: number): Promise<Row[]> {
  const q = source.params(ctx).length + 1;
  const filter = await narrow(ctx, q + 2);
  const rows = await run(
    ctx,
    `WITH x AS MATERIALIZED (
       SELECT json_build_array(${PG_ROW}) AS r FROM ${PG_FROM} CROSS JOIN to_tsquery('english', $${q}) q
        WHERE m.search @@ q AND ${source.scope}${filter.sql})
     SELECT json_agg(r)::text AS j FROM (SELECT r FROM x LIMIT $${q + 1}) y`,
    ...source.params(ctx),
    words.join(" | "),
    limit,
    ...filter.params,
  );
  return parsed<Row>(rows);
}

/**
 * The search's filters on `m` (filter.ts), their placeholders numbered from `from`, and the ids its
 * dates can reach (`idBounds`): a date that lets few of a word's matches through otherwise read
 * every match of each channel newest first to find them (300,000 kept messages: 380-420 ms).
 */
export async function narrow(ctx: Ctx, from: number): Promise<FilterSql> {
  const { sql, params } = filterSql("postgresql", ctx.filter, ctx.scope, from);
  const { lo, hi } = await idBounds(ctx);
  let bounded = sql;
  for (const [op, id] of [[">=", lo], ["<=", hi]] as const) {
    if (id === null) continue;
    params.push(id);
    bounded += ` AND m.id ${op} $${from + params.length - 1}`;
  }
  return { sql: bounded, params };
}

/** A Row's values; createdAt is a timestamp without time zone holding UTC (Prisma's convention). */
export const PG_ROW = `m.id, m."conversationId", m."authorId", m.role, m."sessionId", round(extract(epoch FROM m."createdAt") * 1000)::bigint, m.text`;
const PG_FROM = `"Message" m JOIN "Conversation" c ON c.id = m."conversationId"`;
/**
 * `display`'s two columns; placeholders: the conversation ids (JSON), the workspace, the asking
 * person, the readable channels (JSON), the author ids (JSON).
 */
const pgShown = (conversations: string, workspace: string, person: string, readable: string, authors: string): string =>
  `(SELECT coalesce(json_agg(json_build_array(c.id, c.key, c."isDm", c."channelId", c."threadId")), '[]')::text FROM "Conversation" c
     WHERE c.id IN (SELECT json_array_elements_text(${conversations}::json)) AND c."workspaceId" = ${workspace} AND ${visibleConversation(person, readable)}) AS c,
   (SELECT coalesce(json_agg(json_build_array(p.id, p."displayName")), '[]')::text FROM "Person" p
     WHERE p.id IN (SELECT json_array_elements_text(${authors}::json)) AND p."workspaceId" = ${workspace}) AS p`;

export const postgresQueries: Queries = {
  async stats(ctx) {
    // History's figures, for channel knowledge too: counting a million kept messages for every
    // asker would cost more than the searches it weighs.
    const rows = await run(
      ctx,
      `SELECT count(*) AS docs, avg(length(m.text))::float8 AS "avgChars",
              count(DISTINCT COALESCE(m."sessionId", m."conversationId" || ':' || to_char(m."createdAt", 'YYYY-MM-DD'))) AS sessions
         FROM "Message" m
        WHERE m."workspaceId" = $1 AND m.role IN ('user', 'assistant', 'context') AND m.status <> 'failed'`,
      ctx.scope.workspaceId,
    );
    const r = rows[0];
    return { docs: n(r?.[0]), avgChars: n(r?.[1]), sessions: n(r?.[2]) };
  },
  async df(ctx, words) {
    const out = words.map(() => 0);
    for (const source of wordSources(ctx)) {
      const first = source.params(ctx).length + 1;
      const values = words.map((_, i) => `(${i}, $${i + first})`).join(", ");
      const rows = await run(
        ctx,
        `SELECT t.i, (SELECT count(*) FROM (SELECT 1 FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
                       WHERE m.search @@ plainto_tsquery('english', t.w) AND ${source.scope} LIMIT ${DF_CAP}) x) AS n
           FROM (VALUES ${values}) AS t(i, w)`,
        ...source.params(ctx),
        ...words,
      );
      for (const r of rows) out[n(r[0])] = Math.min(DF_CAP, out[n(r[0])]! + n(r[1]));
    }
    return out;
  },
  async people(ctx) {
    return peopleOf(
      await run(ctx, `SELECT id, "displayName" FROM "Person" WHERE "workspaceId" = $1 AND "displayName" IS NOT NULL AND "isBot" = false`, ctx.scope.workspaceId),
    );
  },
  async lexical(ctx, words, limit, ranked, common, fits = false) {
    const out: Row[] = [];
    for (const source of wordSources(ctx)) {
      if (source.recent) {
        out.push(...(await recentKnowledge(ctx, words, limit, ranked, common)));
        continue;
      }
      const q = source.params(ctx).length + 1;
      const filter = await narrow(ctx, q + 2);
      if (!ranked && fits) {
        out.push(...(await anyMatches(ctx, source, words, limit)));
        continue;
      }
      // Every word common (search-queries.ts `RECENT_WINDOW`): ranked among the newest matches, read
      // backwards by id, not among every message holding one of them.
      const matches = `SELECT m.* FROM ${PG_FROM} CROSS JOIN to_tsquery('english', $${q}) q
            WHERE m.search @@ q AND ${source.scope}${filter.sql} ORDER BY m.id DESC LIMIT ${RECENT_WINDOW}`;
      const from = ranked && common ? `(${matches}) m` : `"Message" m`;
      const rows = await run(
        ctx,
        `SELECT json_agg(r ${ranked ? "ORDER BY rk DESC, id DESC" : ""})::text AS j FROM (
           SELECT json_build_array(${PG_ROW}) AS r, m.id${ranked ? ", ts_rank_cd(m.search, q) AS rk" : ""}
             FROM ${from}${ranked && common ? "" : ` JOIN "Conversation" c ON c.id = m."conversationId"`} CROSS JOIN to_tsquery('english', $${q}) q
            WHERE m.search @@ q${ranked && common ? "" : ` AND ${source.scope}${filter.sql}`}
            ${ranked ? "ORDER BY ts_rank_cd(m.search, q) DESC, m.id DESC" : ""}
            LIMIT $${q + 1}) x`,
        ...source.params(ctx),
        words.join(" | "),
        limit,
        ...filter.params,
      );
      out.push(...parsed<Row>(rows));
    }
    return out;
  },
  async cjk(ctx, q, limit) {
    // Each CJK character is a token of the `cjk` column, so a bigram is a two-token phrase.
    const tsquery = q.grams.map((g) => [...g].join(" <-> ")).join(" | ");
    const filter = await narrow(ctx, 7);
    const rows = await run(
      ctx,
      `SELECT json_agg(r ORDER BY rk DESC, id DESC)::text AS j FROM (
         SELECT json_build_array(${PG_ROW}) AS r, m.id, ts_rank_cd(m.cjk, q) AS rk
           FROM ${PG_FROM} CROSS JOIN to_tsquery('simple', $5) q
          WHERE m.cjk @@ q AND ${PG_SCOPE(1)}${filter.sql}
          ORDER BY ts_rank_cd(m.cjk, q) DESC, m.id DESC
          LIMIT $6) x`,
      ...scopeParams(ctx),
      tsquery,
      limit,
      ...filter.params,
    );
    return parsed<Row>(rows);
  },
  async neighbours(ctx, anchors, window, known, show) {
    const rows = await run(
      ctx,
      // MATERIALIZED plans the arms on their own: inlined, PostgreSQL planned them around the join
      // to k, and the statement ran slower.
      `WITH a AS (SELECT (e->>0)::int AS anchor, e->>1 AS conv FROM json_array_elements($5::json) e),
            k AS (SELECT id::int FROM json_array_elements_text($6::json) AS e(id)),
            x AS MATERIALIZED (${lateralArms(window)})
       SELECT json_agg(CASE WHEN k.id IS NOT NULL THEN json_build_array(x.anchor, x.dir, x.id)
                            ELSE json_build_array(x.anchor, x.dir, ${PG_ROW}) END)::text AS j,
              ${pgShown("$7", "$1", "$2", "$3", "$8")}
         FROM x JOIN ${PG_FROM} ON m.id = x.id
         LEFT JOIN k ON k.id = x.id
        WHERE ${PG_SCOPE(1)}`,
      ...scopeParams(ctx),
      JSON.stringify(anchors.map((d) => [d.id, d.conversationId])),
      JSON.stringify(known.map((d) => d.id)),
      JSON.stringify(show.conversationIds),
      JSON.stringify(show.authorIds),
    );
    return { rows: parsed<NeighbourRow>(rows), display: displayOf(rows[0], 1) };
  },
  async display(ctx, show) {
    const rows = await run(
      ctx,
      `SELECT ${pgShown("$1", "$2", "$3", "$4", "$5")}`,
      JSON.stringify(show.conversationIds),
      ctx.scope.workspaceId,
      ctx.scope.personId,
      ctx.readable,
      JSON.stringify(show.authorIds),
    );
    return displayOf(rows[0], 0);
  },
};
