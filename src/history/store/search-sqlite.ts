/**
 * The search statements on SQLite: candidates from FTS5 (Porter stems) and an FTS5 trigram index
 * (CJK runs of three or more characters), LIKE for two-character CJK words, and neighbours and
 * counts in scope.
 */
import type { SqlParam } from "../../db/direct.ts";
import { filterSql } from "./filter.ts";
import { chatParams, DF_CAP, idBounds, RECENT_WINDOW, displayOf, knowledgeParams, n, parsed, peopleOf, readsKnowledge, run, scopeParams, type Ctx, type NeighbourRow, type Queries, type Row, type Shown } from "./search-queries.ts";

/** CJK bigrams are matched with LIKE over this many of the workspace's latest messages. */
const CJK_SCAN = 5000;

/**
 * A conversation the asker may see: a chat one that is no DM or is theirs; a listened channel's
 * knowledge only if the channel is among those they can read (a JSON array).
 */
function visibleConversation(person: string, readable: string): string {
  return `(CASE WHEN c.kind <> 'channel' THEN (c.isDm = 0 OR c.ownerId = ${person}) ELSE c.channelId IN (SELECT value FROM json_each(${readable})) END)`;
}

/** History in scope, as message_fts holds it (every row but channel knowledge); params chatParams(ctx). */
const SQLITE_CHAT_SCOPE = `m.workspaceId = ? AND (c.isDm = 0 OR c.ownerId = ?) AND (m.sessionId IS NULL OR m.sessionId <> ?) AND m.status <> 'failed'`;
/**
 * Channel knowledge in scope, as knowledge_fts holds it; params knowledgeParams(ctx), then the
 * workspace again. The readable channels' conversations are looked up once (a list SQLite builds
 * before the scan) and each match is checked against it on the message row alone: joining every
 * match to its conversation and the JSON list cost most of a scan that walks the matches of
 * channels the asker cannot read (0.23 s -> 0.14 s for 5,000 matches past 250,000 others).
 */
const SQLITE_KNOWLEDGE_SCOPE = `m.conversationId IN (SELECT c.id FROM "Conversation" c WHERE c.workspaceId = ? AND c.kind = 'channel' AND c.channelId IN (SELECT value FROM json_each(?)))
  AND m.workspaceId = ? AND m.status <> 'failed'`;

/** One full-text index and the scope its rows are checked against. */
interface Source {
  table: "message_fts" | "knowledge_fts" | "message_trgm";
  scope: string;
  params: (ctx: Ctx) => SqlParam[];
  /** Read newest first, its ranking bounded to the newest RECENT_WINDOW matches. */
  recent?: boolean;
  /** The scope reads the message alone: no join to its conversation. */
  messageOnly?: boolean;
}
const CHAT: Source = { table: "message_fts", scope: SQLITE_CHAT_SCOPE, params: chatParams };
const KNOWLEDGE: Source = {
  table: "knowledge_fts",
  scope: SQLITE_KNOWLEDGE_SCOPE,
  params: (ctx) => [...knowledgeParams(ctx), ctx.scope.workspaceId],
  recent: true,
  messageOnly: true,
};
/** History and channel knowledge: the knowledge index only for someone who can read a listened channel. */
const wordSources = (ctx: Ctx): Source[] => (readsKnowledge(ctx) ? [CHAT, KNOWLEDGE] : [CHAT]);

/** The scope's WHERE clause; its `?` params are scopeParams(ctx). */
export const SQLITE_SCOPE = `m.workspaceId = ? AND ${visibleConversation("?", "?")} AND (m.sessionId IS NULL OR m.sessionId <> ?) AND m.status <> 'failed'`;
/** A Row's values; createdAt is stored as ISO 8601 text (Prisma's SQLite format). */
export const SQLITE_ROW = `m.id, m.conversationId, m.authorId, m.role, m.sessionId, CAST(round(unixepoch(m.createdAt, 'subsec') * 1000) AS INTEGER), m.text`;
/** The same as columns of a subquery, and the Row made of them outside it. */
const SQLITE_ROW_COLS = `m.id AS id, m.conversationId AS cid, m.authorId AS aid, m.role AS role, m.sessionId AS sid,
  CAST(round(unixepoch(m.createdAt, 'subsec') * 1000) AS INTEGER) AS at, m.text AS text`;
const SQLITE_ROW_OF_COLS = `json_array(id, cid, aid, role, sid, at, text)`;

/** `display`'s two columns (conversations in scope, people's names); their `?` params are shownParams. */
const SQLITE_SHOWN = `(SELECT json_group_array(json_array(c.id, c.key, c.isDm, c.channelId, c.threadId)) FROM "Conversation" c
    WHERE c.id IN (SELECT value FROM json_each(?)) AND c.workspaceId = ? AND ${visibleConversation("?", "?")}) AS c,
  (SELECT json_group_array(json_array(p.id, p.displayName)) FROM "Person" p
    WHERE p.id IN (SELECT value FROM json_each(?)) AND p.workspaceId = ?) AS p`;
const shownParams = (ctx: Ctx, show: Shown): SqlParam[] => [
  JSON.stringify(show.conversationIds),
  ctx.scope.workspaceId,
  ctx.scope.personId,
  ctx.readable,
  JSON.stringify(show.authorIds),
  ctx.scope.workspaceId,
];

/**
 * An index's matches joined to their messages (and conversations, unless the scope reads the
 * message alone). CROSS JOIN keeps the index first: its order is the one read (newest first).
 */
const fromMatches = (source: Source): string =>
  source.messageOnly
    ? `${source.table} CROSS JOIN "Message" m ON m.id = ${source.table}.rowid`
    : `${source.table} JOIN "Message" m ON m.id = ${source.table}.rowid JOIN "Conversation" c ON c.id = m.conversationId`;

/** The search's filters on `m`, where the scope's clause ends (filter.ts). */
const narrow = (ctx: Ctx) => filterSql("sqlite", ctx.filter, ctx.scope);

const quoted = (words: string[]): string => words.map((w) => `"${w}"`).join(" OR ");

/** Scoped candidates from one FTS5 index (words or trigrams), best bm25 first when `ranked`. */
async function sqliteMatch(ctx: Ctx, source: Source, terms: string[], limit: number, ranked: boolean): Promise<Row[]> {
  const { table } = source;
  // A source bounded by recency (channel knowledge) is read newest first, and only its newest
  // RECENT_WINDOW matches in scope are ranked: a big channel's common words match hundreds of
  // thousands of messages, and bm25 over all of them took seconds.
  const recent = source.recent === true;
  const filter = narrow(ctx);
  // A date filter bounds the index's rowids (filter.ts `idBoundsSql`): FTS5 skips the rest of the word's matches.
  const { lo, hi } = await idBounds(ctx);
  const ids = `${lo !== null ? ` AND ${table}.rowid >= ?` : ""}${hi !== null ? ` AND ${table}.rowid <= ?` : ""}`;
  const inner = `SELECT ${SQLITE_ROW_COLS}${ranked ? `, bm25(${table}) AS rk` : ""}
         FROM ${fromMatches(source)}
        WHERE ${table} MATCH ?${ids} AND ${source.scope}${filter.sql}`;
  const candidates = recent
    ? ranked
      ? `SELECT * FROM (${inner} ORDER BY ${table}.rowid DESC LIMIT ${RECENT_WINDOW}) ORDER BY rk, id DESC LIMIT ?`
      : `${inner} ORDER BY ${table}.rowid DESC LIMIT ?`
    : `${inner} ${ranked ? `ORDER BY bm25(${table}), m.id DESC` : ""} LIMIT ?`;
  // ORDER BY inside the aggregate keeps the ranked order.
  const rows = await run(
    ctx,
    `SELECT json_group_array(${SQLITE_ROW_OF_COLS} ${ranked ? "ORDER BY rk, id DESC" : ""}) AS j FROM (${candidates})`,
    quoted(terms),
    ...[lo, hi].filter((b): b is number => b !== null),
    ...source.params(ctx),
    ...filter.params,
    limit,
  );
  return parsed<Row>(rows);
}

/** The same match over each source, one after the other (each source's own limit). */
async function matchEach(ctx: Ctx, sources: readonly Source[], terms: string[], limit: number, ranked: boolean): Promise<Row[]> {
  const out: Row[] = [];
  for (const source of sources) out.push(...(await sqliteMatch(ctx, source, terms, limit, ranked)));
  return out;
}

export const sqliteQueries: Queries = {
  async stats(ctx) {
    // History's figures, for channel knowledge too: counting a million kept messages for every
    // asker would cost more than the searches it weighs.
    const rows = await run(
      ctx,
      `SELECT count(*) AS docs, avg(length(m.text)) AS avgChars,
              count(DISTINCT COALESCE(m.sessionId, m.conversationId || ':' || substr(m.createdAt, 1, 10))) AS sessions
         FROM "Message" m
        WHERE m.workspaceId = ? AND m.role IN ('user', 'assistant', 'context') AND m.status <> 'failed'`,
      ctx.scope.workspaceId,
    );
    const r = rows[0];
    return { docs: n(r?.[0]), avgChars: n(r?.[1]), sessions: n(r?.[2]) };
  },
  async df(ctx, words) {
    const out = words.map(() => 0);
    for (const source of wordSources(ctx)) {
      const parts = words.map(
        (_, i) => `SELECT ${i} AS i, (SELECT count(*) FROM (SELECT 1 FROM ${fromMatches(source)}
                   WHERE ${source.table} MATCH ? AND ${source.scope} LIMIT ${DF_CAP})) AS n`,
      );
      const rows = await run(ctx, parts.join(" UNION ALL "), ...words.flatMap((w) => [`"${w}"`, ...source.params(ctx)]));
      for (const r of rows) out[n(r[0])] = Math.min(DF_CAP, out[n(r[0])]! + n(r[1]));
    }
    return out;
  },
  async people(ctx) {
    return peopleOf(await run(ctx, `SELECT id, displayName FROM "Person" WHERE workspaceId = ? AND displayName IS NOT NULL AND isBot = 0`, ctx.scope.workspaceId));
  },
  async lexical(ctx, words, limit, ranked, common) {
    // Every word common (search-queries.ts `RECENT_WINDOW`): history too is ranked among its newest matches.
    const sources = ranked && common ? wordSources(ctx).map((s) => ({ ...s, recent: true })) : wordSources(ctx);
    return matchEach(ctx, sources, words, limit, ranked);
  },
  async cjk(ctx, q, limit) {
    const out: Row[] = [];
    // Substrings of 3+ characters: the trigram index, over the whole history.
    const trigrams = [...new Set(q.cjkRuns.flatMap((run) => ngrams(run, 3)))].slice(0, 48);
    if (trigrams.length > 0) {
      // The trigram index holds history and channel knowledge alike: the full scope sorts them out.
      out.push(...(await sqliteMatch(ctx, { table: "message_trgm", scope: SQLITE_SCOPE, params: scopeParams }, trigrams, limit, true)));
    }
    // Two-character words (most Chinese words) are below what a trigram index can look up: they are
    // matched with LIKE over the workspace's latest messages.
    const like = q.grams.map(() => `m.text LIKE ?`).join(" OR ");
    const filter = narrow(ctx);
    const rows = await run(
      ctx,
      `SELECT json_group_array(${SQLITE_ROW_OF_COLS}) AS j FROM (
         SELECT ${SQLITE_ROW_COLS}
           FROM (SELECT * FROM "Message" WHERE workspaceId = ? ORDER BY createdAt DESC LIMIT ${CJK_SCAN}) m
           JOIN "Conversation" c ON c.id = m.conversationId
          WHERE (${like}) AND ${SQLITE_SCOPE}${filter.sql}
          LIMIT ?)`,
      ctx.scope.workspaceId,
      ...q.grams.map((g) => `%${g}%`),
      ...scopeParams(ctx),
      ...filter.params,
      limit,
    );
    out.push(...parsed<Row>(rows));
    return out;
  },
  async neighbours(ctx, anchors, window, known, show) {
    const rows = await run(
      ctx,
      // The anchors travel as one JSON parameter so the statement text stays short and the same
      // (preparing a statement with hundreds of placeholders cost more than running it). Each
      // neighbour id is one seek in the (conversationId, id) index; MATERIALIZED keeps SQLite from
      // pushing the joins below into every arm of the union, and CROSS JOIN keeps x first (left to
      // itself, the planner walked all of the workspace's messages and probed x for each). Whether a
      // neighbour is a candidate is an IN list, which SQLite indexes: as a LEFT JOIN to the
      // candidates it scanned all of them for every neighbour.
      `WITH a AS (SELECT json_extract(value, '$[0]') AS anchor, json_extract(value, '$[1]') AS conv FROM json_each(?)),
            x AS MATERIALIZED (${neighbourArms(window, "a.conv", "a.anchor")})
       SELECT json_group_array(CASE WHEN x.id IN (SELECT value FROM json_each(?)) THEN json_array(x.anchor, x.dir, x.id)
                                    ELSE json_array(x.anchor, x.dir, ${SQLITE_ROW}) END) AS j,
              ${SQLITE_SHOWN}
         FROM x
         CROSS JOIN "Message" m ON m.id = x.id
         JOIN "Conversation" c ON c.id = m.conversationId
        WHERE ${SQLITE_SCOPE}`,
      JSON.stringify(anchors.map((d) => [d.id, d.conversationId])),
      JSON.stringify(known.map((d) => d.id)),
      ...shownParams(ctx, show),
      ...scopeParams(ctx),
    );
    return { rows: parsed<NeighbourRow>(rows), display: displayOf(rows[0], 1) };
  },
  async display(ctx, show) {
    const rows = await run(ctx, `SELECT ${SQLITE_SHOWN}`, ...shownParams(ctx, show));
    return displayOf(rows[0], 0);
  },
};

/**
 * One arm per distance: the message `k` places before (dir -k) or after (dir k) each anchor in its
 * conversation, as a scalar subquery on the (conversationId, id) index. SQLite's form (it has no
 * LATERAL); PostgreSQL uses `lateralArms` (search-postgres.ts).
 */
function neighbourArms(window: number, conv: string, anchor: string): string {
  const arms: string[] = [];
  for (let k = 1; k <= window; k++) {
    for (const [dir, op, order] of [[-k, "<", "DESC"], [k, ">", "ASC"]] as const) {
      arms.push(
        `SELECT ${anchor} AS anchor, ${dir} AS dir, (SELECT id FROM "Message" WHERE "conversationId" = ${conv} AND id ${op} ${anchor} ORDER BY id ${order} LIMIT 1 OFFSET ${k - 1}) AS id FROM a`,
      );
    }
  }
  return arms.join(" UNION ALL ");
}

/** The substrings of `run` that are `size` characters long. */
function ngrams(run: string, size: number): string[] {
  const chars = [...run];
  if (chars.length < size) return [];
  const out: string[] = [];
  for (let i = 0; i + size <= chars.length; i++) out.push(chars.slice(i, i + size).join(""));
  return out;
}
