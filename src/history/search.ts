/**
 * Search over stored messages: the one search that `session_search` (and any automatic recall)
 * uses. The databases find candidates - FTS5 (Porter) and an FTS5 trigram index on SQLite, the
 * english tsvector and a CJK character tsvector on PostgreSQL - and count; ranking happens in
 * rank.ts, the same for both.
 *
 * Invariant: results come only from conversations the asker may see, enforced in the WHERE clause
 * of every query here (candidates, neighbours, counts, what hits show): the asker's workspace, and
 * among its DMs only the asker's own.
 */
import type { Database } from "../db/client.ts";
import type { SqlParam } from "../db/direct.ts";
import type { Scope } from "../core/types.ts";
import { analyzeQuery, type AnalyzedQuery } from "./query.ts";
import { countTerms, DEFAULT_RANKING, rank, type Neighbour, type RankDoc, type RankStats, type RankingOptions, type TermCounts } from "./rank.ts";
import { docKeys, fold, makeSnippet } from "./text.ts";

export interface SearchHit {
  messageId: number;
  conversationId: string;
  conversationKey: string;
  isDm: boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  author: string | null;
  createdAt: Date;
  snippet: string;
}

export interface SearchOptions {
  limit: number;
  /** Messages of this session are already in the prompt: leave them out. */
  excludeSessionId?: string | null;
  /** Ranking levers; the defaults are what cairn uses. For benchmarks that switch levers off. */
  ranking?: Partial<RankingOptions>;
}

/** Candidates fetched per query: enough that truncation by the database's own rank rarely matters. */
const MAX_CANDIDATES = 400;
/** Candidates whose neighbours are fetched. */
const MAX_ANCHORS = 40;
/** Document-frequency counts stop here: past it a word's weight is near zero anyway. */
const DF_CAP = 5000;
/** CJK bigrams are matched with LIKE over this many of the workspace's latest messages. */
const CJK_SCAN = 5000;

/**
 * A candidate as the databases return it: only what ranking reads, as one JSON array per message
 * (id, conversation, author, role, session, createdAt in epoch ms, text).
 * The whole result set comes back as one JSON text (`json_group_array` / `json_agg`) read with
 * JSON.parse: a row per message, through Prisma, became several arrays and an object each, most of
 * what a search allocated and what the collector copied (those rows lived long enough to be
 * promoted). Every statement here takes the direct path (db/direct.ts). What a result shows of its
 * conversation (key, channel, thread) and author (name) is fetched once per conversation and
 * person (`display`), in the statement that fetches the neighbours.
 */
type Row = [id: number, conversationId: string, authorId: string | null, role: string, sessionId: string | null, createdAt: number, text: string];

/**
 * A neighbour: its anchor's id, its place relative to it, and the message, or just the message's
 * id when it is among the candidates (about half of all neighbours are).
 */
type NeighbourRow = [anchor: number, dir: number, ...message: Row | [candidateId: number]];

/** Whose conversations and names a search's hits may show. */
interface Shown {
  conversationIds: string[];
  authorIds: string[];
}

/** What hits show of their conversations and authors. */
interface Display {
  conversations: [id: string, key: string, isDm: number | boolean, channelId: string, threadId: string | null][];
  people: [id: string, displayName: string | null][];
}

export async function searchMessages(db: Database, scope: Scope, query: string, opts: SearchOptions): Promise<SearchHit[]> {
  const q = analyzeQuery(query);
  if (q.terms.length === 0 && q.grams.length === 0) return [];
  const options: RankingOptions = { ...DEFAULT_RANKING, ...opts.ranking };
  const sql = db.provider === "sqlite" ? sqliteQueries : postgresQueries;
  const ctx: Ctx = { db, scope, exclude: opts.excludeSessionId ?? "" };
  const words = q.terms.map((t) => t.word);

  const [stats, people, lexical, cjk] = await Promise.all([
    cached(ctx, "stats", () => sql.stats(ctx)),
    options.author > 0 && q.nameWords.length > 0 ? cached(ctx, "people", () => sql.people(ctx)) : Promise.resolve([]),
    words.length > 0 ? sql.lexical(ctx, words, MAX_CANDIDATES + 1, false) : Promise.resolve([]),
    q.grams.length > 0 ? sql.cjk(ctx, q, MAX_CANDIDATES) : Promise.resolve([]),
  ]);
  let found = lexical;
  // When every match fits, document frequencies are counted among the candidates (exact) and the
  // database need not rank them. When they do not, the database counts them, words found in most
  // of the scope's messages are left out of the candidate query (they would flood it; they still
  // count in the score of the rest), and its own rank picks which candidates to keep.
  const df = new Map<string, number>();
  if (lexical.length > MAX_CANDIDATES) {
    const counts = await sql.df(ctx, words);
    // Forms of one word ("go", "went") share a key: a message holds one or the other, so they add up.
    q.terms.forEach((t, i) => df.set(t.key, Math.min((df.get(t.key) ?? 0) + (counts[i] ?? 0), DF_CAP)));
    const common = Math.max(2000, stats.docs * 0.25);
    const rare = q.terms.filter((t) => (df.get(t.key) ?? 0) > 0 && df.get(t.key)! <= common);
    const use = rare.length > 0 ? rare : q.terms;
    found = await sql.lexical(ctx, use.map((t) => t.word), MAX_CANDIDATES, true);
  }
  const named = resolveNames(people, q.nameWords);

  const matches = found.map((r) => toDoc(r, 0));
  if (cjk.length > 0) {
    const seen = new Set(found.map((r) => r[0]));
    for (const r of cjk) if (!seen.has(r[0]) && seen.add(r[0])) matches.push(toDoc(r, 0));
  }
  if (matches.length === 0) return [];
  const terms = countTerms(q, matches);

  // Neighbours share their anchor's conversation, so the candidates' conversations are all a hit
  // can be in; their authors are nearly all a hit can have (the rest are looked up after ranking).
  // Both come back with the neighbours: one statement, one round trip.
  const show: Shown = { conversationIds: [...new Set(matches.map((d) => d.conversationId))], authorIds: authorsOf(matches) };
  const anchors = options.window > 0 ? anchorsOf(matches, terms, df) : [];
  const { rows: near, display: shown } =
    anchors.length > 0 ? await sql.neighbours(ctx, anchors, options.window, matches, show) : { rows: [], display: await sql.display(ctx, show) };
  const neighbours: Neighbour[] = [];
  const candidates = near.length > 0 ? new Map(matches.map((d) => [d.id, d])) : null;
  for (const r of near) {
    // A candidate comes back as its id alone; rank() merges a message met twice.
    const doc = r.length === 3 ? candidates!.get(r[2]) : toDoc(r, 2);
    if (doc) neighbours.push({ anchor: r[0], offset: r[1], doc });
  }

  const ranked = rank({ query: q, matches, neighbours, stats: { ...stats, df }, namedPeople: named, options, limit: opts.limit, terms });
  if (ranked.length === 0) return [];
  const conversations = new Map(shown.conversations.map((c) => [c[0], c]));
  const names = new Map(shown.people);
  const missing = authorsOf(ranked.map((r) => r.doc)).filter((id) => !names.has(id));
  if (missing.length > 0) for (const [id, name] of (await sql.display(ctx, { conversationIds: [], authorIds: missing })).people) names.set(id, name);
  const keys = new Set(terms.keys);
  const hits: SearchHit[] = [];
  for (const { doc } of ranked) {
    const c = conversations.get(doc.conversationId);
    if (!c) continue;
    hits.push({
      messageId: doc.id,
      conversationId: doc.conversationId,
      conversationKey: c[1],
      isDm: c[2] === true || c[2] === 1,
      channelId: c[3],
      threadId: c[4],
      role: doc.role ?? "user",
      author: doc.authorId === null ? null : (names.get(doc.authorId) ?? null),
      createdAt: doc.createdAt,
      snippet: makeSnippet(doc.text, keys),
    });
  }
  return hits;
}

function authorsOf(docs: readonly RankDoc[]): string[] {
  const ids = new Set<string>();
  for (const d of docs) if (d.authorId !== null) ids.add(d.authorId);
  return [...ids];
}

/**
 * Anchors (the candidates whose neighbours are fetched): the best by a cheap pre-score, the query
 * keys a candidate holds with rarer ones weighing more. Ties keep the database's order.
 */
function anchorsOf(matches: readonly RankDoc[], terms: TermCounts, df: ReadonlyMap<string, number>): RankDoc[] {
  const width = terms.keys.length;
  const count = new Float64Array(width);
  for (let i = 0; i < matches.length; i++) for (let j = 0; j < width; j++) if (terms.tf[i * width + j]! > 0) count[j]!++;
  const weight = terms.keys.map((k, j) => 1 / Math.log(2 + (df.get(k) ?? (count[j]! || 1))));
  const pre = new Float64Array(matches.length);
  for (let i = 0; i < matches.length; i++) for (let j = 0; j < width; j++) if (terms.tf[i * width + j]! > 0) pre[i]! += weight[j]!;
  const order = Array.from({ length: matches.length }, (_, i) => i);
  order.sort((a, b) => (pre[b]! > pre[a]! ? 1 : pre[b]! < pre[a]! ? -1 : a - b));
  return order.slice(0, MAX_ANCHORS).map((i) => matches[i]!);
}

/** The Row starting at `from` of a database's array (indexed, not destructured: no iterator). */
function toDoc(r: readonly unknown[], from: number): RankDoc {
  const conversationId = r[from + 1] as Row[1];
  const authorId = r[from + 2] as Row[2];
  const role = r[from + 3] as Row[3];
  const createdAt = new Date(r[from + 5] as Row[5]);
  const text = r[from + 6] as Row[6];
  return {
    id: r[from] as Row[0],
    conversationId,
    speaker: role === "assistant" ? "cairn" : (authorId ?? "someone"),
    authorId,
    role,
    sessionKey: sessionKey(r[from + 4] as Row[4], conversationId, createdAt),
    createdAt,
    text,
    keys: docKeys(text),
  };
}

/** The rows of a query that returns its result set as one JSON text (its first column). */
function parsed<T>(rows: unknown[][]): T[] {
  const j = rows[0]?.[0];
  return typeof j === "string" ? (JSON.parse(j) as T[]) : [];
}

/** One search statement, on the direct path (db/direct.ts): rows as arrays. */
function run(ctx: Ctx, sql: string, ...params: SqlParam[]): Promise<unknown[][]> {
  return ctx.db.direct.rows(sql, params);
}

/** People from rows of (id, displayName). */
function peopleOf(rows: unknown[][]): Person[] {
  return rows.map((r) => ({ id: r[0] as string, displayName: r[1] as string }));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Messages of a cairn session share its id; messages no session claimed (channel talk cairn was
 * not part of) are grouped by conversation and UTC day (the day's number since the epoch: one
 * short string per message instead of a date formatted and cut). The SQL counts group the same way.
 */
export function sessionKey(sessionId: string | null, conversationId: string, createdAt: Date): string {
  return sessionId ?? `${conversationId}:${Math.floor(createdAt.getTime() / DAY_MS)}`;
}

interface Ctx {
  db: Database;
  scope: Scope;
  exclude: string;
}

type Stats = Omit<RankStats, "df">;

interface Person {
  id: string;
  displayName: string;
}

interface Queries {
  stats(ctx: Ctx): Promise<Stats>;
  /** Messages in scope containing each word (capped at DF_CAP), in the order given. */
  df(ctx: Ctx, words: string[]): Promise<number[]>;
  /** The workspace's (human) people with a display name. */
  people(ctx: Ctx): Promise<Person[]>;
  /** Messages in scope matching any word; ranked by the database only when `ranked`. */
  lexical(ctx: Ctx, words: string[], limit: number, ranked: boolean): Promise<Row[]>;
  cjk(ctx: Ctx, q: AnalyzedQuery, limit: number): Promise<Row[]>;
  /**
   * Up to `window` messages on each side of each anchor in its conversation, in scope. The ids come
   * from the (conversationId, id) index first, so the rows are then read by primary key. Messages
   * among `known` (the candidates) come back as their index in it alone. With them, what `display`
   * returns for `show`.
   */
  neighbours(ctx: Ctx, anchors: RankDoc[], window: number, known: RankDoc[], show: Shown): Promise<{ rows: NeighbourRow[]; display: Display }>;
  /** What hits show: of these conversations those in scope, and these people's names. */
  display(ctx: Ctx, show: Shown): Promise<Display>;
}

/**
 * Workspace figures (message and session counts, names of people) are reused for a short while:
 * counting a big workspace costs more than a search, and a few seconds' staleness only nudges
 * weights (IDF) or misses a person who just joined; results are never read from the cache.
 */
const CACHE_TTL_MS = 30_000;
const caches = new WeakMap<Database, Map<string, { at: number; value: unknown }>>();

async function cached<T>(ctx: Ctx, what: "stats" | "people", load: () => Promise<T>): Promise<T> {
  let cache = caches.get(ctx.db);
  if (!cache) {
    cache = new Map();
    caches.set(ctx.db, cache);
  }
  const key = what === "stats" ? `stats|${ctx.scope.workspaceId}|${ctx.scope.personId}` : `people|${ctx.scope.workspaceId}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.value as T;
  const value = await load();
  if (cache.size > 2000) cache.clear();
  cache.set(key, { at: Date.now(), value });
  return value;
}

/** People the query names: a query word equal to a display name or to its first word ("alice"). */
function resolveNames(people: readonly Person[], words: readonly string[]): string[] {
  if (people.length === 0 || words.length === 0) return [];
  const wanted = new Set(words);
  return people
    .filter((p) => {
      const name = fold(p.displayName.trim());
      return wanted.has(name) || wanted.has(name.split(/\s+/)[0] ?? "");
    })
    .map((p) => p.id);
}

function n(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : Number(v ?? 0);
}

/** The scope's WHERE clause; its `?` params are scopeParams(ctx). */
const SQLITE_SCOPE = `m.workspaceId = ? AND (c.isDm = 0 OR c.ownerId = ?) AND (m.sessionId IS NULL OR m.sessionId <> ?) AND m.status <> 'failed'`;
/** A Row's values; createdAt is stored as ISO 8601 text (Prisma's SQLite format). */
const SQLITE_ROW = `m.id, m.conversationId, m.authorId, m.role, m.sessionId, CAST(round(unixepoch(m.createdAt, 'subsec') * 1000) AS INTEGER), m.text`;
/** The same as columns of a subquery, and the Row made of them outside it. */
const SQLITE_ROW_COLS = `m.id AS id, m.conversationId AS cid, m.authorId AS aid, m.role AS role, m.sessionId AS sid,
  CAST(round(unixepoch(m.createdAt, 'subsec') * 1000) AS INTEGER) AS at, m.text AS text`;
const SQLITE_ROW_OF_COLS = `json_array(id, cid, aid, role, sid, at, text)`;
const scopeParams = (ctx: Ctx): SqlParam[] => [ctx.scope.workspaceId, ctx.scope.personId, ctx.exclude];

/** `display`'s two columns (conversations in scope, people's names); their `?` params are shownParams. */
const SQLITE_SHOWN = `(SELECT json_group_array(json_array(c.id, c.key, c.isDm, c.channelId, c.threadId)) FROM "Conversation" c
    WHERE c.id IN (SELECT value FROM json_each(?)) AND c.workspaceId = ? AND (c.isDm = 0 OR c.ownerId = ?)) AS c,
  (SELECT json_group_array(json_array(p.id, p.displayName)) FROM "Person" p
    WHERE p.id IN (SELECT value FROM json_each(?)) AND p.workspaceId = ?) AS p`;
const shownParams = (ctx: Ctx, show: Shown): SqlParam[] => [
  JSON.stringify(show.conversationIds),
  ctx.scope.workspaceId,
  ctx.scope.personId,
  JSON.stringify(show.authorIds),
  ctx.scope.workspaceId,
];

/** A Display from the columns (conversations, people) of SQLITE_SHOWN / pgShown, starting at `at`. */
function displayOf(row: readonly unknown[] | undefined, at: number): Display {
  const json = (v: unknown): string => (typeof v === "string" ? v : "[]");
  return { conversations: JSON.parse(json(row?.[at])) as Display["conversations"], people: JSON.parse(json(row?.[at + 1])) as Display["people"] };
}
const quoted = (words: string[]): string => words.map((w) => `"${w}"`).join(" OR ");

/** Scoped candidates from one FTS5 index (words or trigrams), best bm25 first when `ranked`. */
async function sqliteMatch(ctx: Ctx, table: "message_fts" | "message_trgm", terms: string[], limit: number, ranked: boolean): Promise<Row[]> {
  // ORDER BY inside the aggregate keeps the ranked order.
  const rows = await run(
    ctx,
    `SELECT json_group_array(${SQLITE_ROW_OF_COLS} ${ranked ? "ORDER BY rk, id DESC" : ""}) AS j FROM (
       SELECT ${SQLITE_ROW_COLS}${ranked ? `, bm25(${table}) AS rk` : ""}
         FROM ${table}
         JOIN "Message" m ON m.id = ${table}.rowid
         JOIN "Conversation" c ON c.id = m.conversationId
        WHERE ${table} MATCH ? AND ${SQLITE_SCOPE}
        ${ranked ? `ORDER BY bm25(${table}), m.id DESC` : ""}
        LIMIT ?)`,
    quoted(terms),
    ...scopeParams(ctx),
    limit,
  );
  return parsed<Row>(rows);
}

const sqliteQueries: Queries = {
  async stats(ctx) {
    const rows = await run(
      ctx,
      `SELECT count(*) AS docs, avg(length(m.text)) AS avgChars,
              count(DISTINCT COALESCE(m.sessionId, m.conversationId || ':' || substr(m.createdAt, 1, 10))) AS sessions
         FROM "Message" m JOIN "Conversation" c ON c.id = m.conversationId
        WHERE ${SQLITE_SCOPE}`,
      ...scopeParams(ctx),
    );
    const r = rows[0];
    return { docs: n(r?.[0]), avgChars: n(r?.[1]), sessions: n(r?.[2]) };
  },
  async df(ctx, words) {
    const parts = words.map(
      (_, i) => `SELECT ${i} AS i, (SELECT count(*) FROM (SELECT 1 FROM message_fts JOIN "Message" m ON m.id = message_fts.rowid
                 JOIN "Conversation" c ON c.id = m.conversationId WHERE message_fts MATCH ? AND ${SQLITE_SCOPE} LIMIT ${DF_CAP})) AS n`,
    );
    const rows = await run(
      ctx,
      parts.join(" UNION ALL "),
      ...words.flatMap((w) => [`"${w}"`, ...scopeParams(ctx)]),
    );
    const out = words.map(() => 0);
    for (const r of rows) out[n(r[0])] = n(r[1]);
    return out;
  },
  async people(ctx) {
    return peopleOf(await run(ctx, `SELECT id, displayName FROM "Person" WHERE workspaceId = ? AND displayName IS NOT NULL AND isBot = 0`, ctx.scope.workspaceId));
  },
  async lexical(ctx, words, limit, ranked) {
    return sqliteMatch(ctx, "message_fts", words, limit, ranked);
  },
  async cjk(ctx, q, limit) {
    const out: Row[] = [];
    // Substrings of 3+ characters: the trigram index, over the whole history.
    const trigrams = [...new Set(q.cjkRuns.flatMap((run) => ngrams(run, 3)))].slice(0, 48);
    if (trigrams.length > 0) {
      out.push(...(await sqliteMatch(ctx, "message_trgm", trigrams, limit, true)));
    }
    // Two-character words (most Chinese words) are below what a trigram index can look up: they are
    // matched with LIKE over the workspace's latest messages.
    const like = q.grams.map(() => `m.text LIKE ?`).join(" OR ");
    const rows = await run(
      ctx,
      `SELECT json_group_array(${SQLITE_ROW_OF_COLS}) AS j FROM (
         SELECT ${SQLITE_ROW_COLS}
           FROM (SELECT * FROM "Message" WHERE workspaceId = ? ORDER BY createdAt DESC LIMIT ${CJK_SCAN}) m
           JOIN "Conversation" c ON c.id = m.conversationId
          WHERE (${like}) AND ${SQLITE_SCOPE}
          LIMIT ?)`,
      ctx.scope.workspaceId,
      ...q.grams.map((g) => `%${g}%`),
      ...scopeParams(ctx),
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
      // candidates it scanned all of them for every neighbour (64,000 rows a search).
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
 * LATERAL); PostgreSQL uses `lateralArms`.
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

/**
 * PostgreSQL's form of `neighbourArms`: one index scan per anchor and side, reading `window` ids,
 * where the arms seek once per distance (and skip k - 1 entries to reach the k-th). Replaying
 * LoCoMo's 760 neighbour statements: the same rows, p50 7.2 -> 6.4 ms (on a busy machine).
 */
function lateralArms(window: number): string {
  const side = (op: "<" | ">", order: "DESC" | "ASC", sign: "-" | "") =>
    `SELECT a.anchor, ${sign}n.n::int AS dir, n.id FROM a CROSS JOIN LATERAL (
       SELECT id, row_number() OVER (ORDER BY id ${order}) AS n
         FROM (SELECT id FROM "Message" WHERE "conversationId" = a.conv AND id ${op} a.anchor ORDER BY id ${order} LIMIT ${window}) s) n`;
  return `${side("<", "DESC", "-")} UNION ALL ${side(">", "ASC", "")}`;
}

/** pg placeholders for the scope, numbered from `from`. */
const PG_SCOPE = (from: number): string =>
  `m."workspaceId" = $${from} AND (c."isDm" = false OR c."ownerId" = $${from + 1}) AND (m."sessionId" IS NULL OR m."sessionId" <> $${from + 2}) AND m.status <> 'failed'`;
/** A Row's values; createdAt is a timestamp without time zone holding UTC (Prisma's convention). */
const PG_ROW = `m.id, m."conversationId", m."authorId", m.role, m."sessionId", round(extract(epoch FROM m."createdAt") * 1000)::bigint, m.text`;
const PG_FROM = `"Message" m JOIN "Conversation" c ON c.id = m."conversationId"`;
/**
 * `display`'s two columns; placeholders: the conversation ids (JSON), the workspace, the asking
 * person, the author ids (JSON).
 */
const pgShown = (conversations: string, workspace: string, person: string, authors: string): string =>
  `(SELECT coalesce(json_agg(json_build_array(c.id, c.key, c."isDm", c."channelId", c."threadId")), '[]')::text FROM "Conversation" c
     WHERE c.id IN (SELECT json_array_elements_text(${conversations}::json)) AND c."workspaceId" = ${workspace} AND (c."isDm" = false OR c."ownerId" = ${person})) AS c,
   (SELECT coalesce(json_agg(json_build_array(p.id, p."displayName")), '[]')::text FROM "Person" p
     WHERE p.id IN (SELECT json_array_elements_text(${authors}::json)) AND p."workspaceId" = ${workspace}) AS p`;

const postgresQueries: Queries = {
  async stats(ctx) {
    const rows = await run(
      ctx,
      `SELECT count(*) AS docs, avg(length(m.text))::float8 AS "avgChars",
              count(DISTINCT COALESCE(m."sessionId", m."conversationId" || ':' || to_char(m."createdAt", 'YYYY-MM-DD'))) AS sessions
         FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
        WHERE ${PG_SCOPE(1)}`,
      ...scopeParams(ctx),
    );
    const r = rows[0];
    return { docs: n(r?.[0]), avgChars: n(r?.[1]), sessions: n(r?.[2]) };
  },
  async df(ctx, words) {
    const values = words.map((_, i) => `(${i}, $${i + 4})`).join(", ");
    const rows = await run(
      ctx,
      `SELECT t.i, (SELECT count(*) FROM (SELECT 1 FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
                     WHERE m.search @@ plainto_tsquery('english', t.w) AND ${PG_SCOPE(1)} LIMIT ${DF_CAP}) x) AS n
         FROM (VALUES ${values}) AS t(i, w)`,
      ...scopeParams(ctx),
      ...words,
    );
    const out = words.map(() => 0);
    for (const r of rows) out[n(r[0])] = n(r[1]);
    return out;
  },
  async people(ctx) {
    return peopleOf(
      await run(ctx, `SELECT id, "displayName" FROM "Person" WHERE "workspaceId" = $1 AND "displayName" IS NOT NULL AND "isBot" = false`, ctx.scope.workspaceId),
    );
  },
  async lexical(ctx, words, limit, ranked) {
    const rows = await run(
      ctx,
      `SELECT json_agg(r ${ranked ? "ORDER BY rk DESC, id DESC" : ""})::text AS j FROM (
         SELECT json_build_array(${PG_ROW}) AS r, m.id${ranked ? ", ts_rank_cd(m.search, q) AS rk" : ""}
           FROM ${PG_FROM} CROSS JOIN to_tsquery('english', $4) q
          WHERE m.search @@ q AND ${PG_SCOPE(1)}
          ${ranked ? "ORDER BY ts_rank_cd(m.search, q) DESC, m.id DESC" : ""}
          LIMIT $5) x`,
      ...scopeParams(ctx),
      words.join(" | "),
      limit,
    );
    return parsed<Row>(rows);
  },
  async cjk(ctx, q, limit) {
    // Each CJK character is a token of the `cjk` column, so a bigram is a two-token phrase.
    const tsquery = q.grams.map((g) => [...g].join(" <-> ")).join(" | ");
    const rows = await run(
      ctx,
      `SELECT json_agg(r ORDER BY rk DESC, id DESC)::text AS j FROM (
         SELECT json_build_array(${PG_ROW}) AS r, m.id, ts_rank_cd(m.cjk, q) AS rk
           FROM ${PG_FROM} CROSS JOIN to_tsquery('simple', $4) q
          WHERE m.cjk @@ q AND ${PG_SCOPE(1)}
          ORDER BY ts_rank_cd(m.cjk, q) DESC, m.id DESC
          LIMIT $5) x`,
      ...scopeParams(ctx),
      tsquery,
      limit,
    );
    return parsed<Row>(rows);
  },
  async neighbours(ctx, anchors, window, known, show) {
    const rows = await run(
      ctx,
      `WITH a AS (SELECT (e->>0)::int AS anchor, e->>1 AS conv FROM json_array_elements($4::json) e),
            k AS (SELECT id::int FROM json_array_elements_text($5::json) AS e(id)),
            -- MATERIALIZED: inlined, the arms were planned around the join to k (about 1 ms slower).
            x AS MATERIALIZED (${lateralArms(window)})
       SELECT json_agg(CASE WHEN k.id IS NOT NULL THEN json_build_array(x.anchor, x.dir, x.id)
                            ELSE json_build_array(x.anchor, x.dir, ${PG_ROW}) END)::text AS j,
              ${pgShown("$6", "$1", "$2", "$7")}
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
      `SELECT ${pgShown("$1", "$2", "$3", "$4")}`,
      JSON.stringify(show.conversationIds),
      ctx.scope.workspaceId,
      ctx.scope.personId,
      JSON.stringify(show.authorIds),
    );
    return displayOf(rows[0], 0);
  },
};

function ngrams(run: string, size: number): string[] {
  const chars = [...run];
  if (chars.length < size) return [];
  const out: string[] = [];
  for (let i = 0; i + size <= chars.length; i++) out.push(chars.slice(i, i + size).join(""));
  return out;
}
