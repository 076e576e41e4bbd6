/**
 * Search over stored messages: the one search that `session_search` (and any automatic recall)
 * uses. The databases find candidates - FTS5 (Porter) and an FTS5 trigram index on SQLite, the
 * english tsvector and a CJK character tsvector on PostgreSQL - and count; ranking happens in
 * rank.ts, the same for both.
 *
 * Invariant: results come only from conversations the asker may see, enforced in the WHERE clause
 * of every query here (candidates, neighbours, counts): the asker's workspace, and among its DMs
 * only the asker's own.
 */
import type { Database } from "../db/client.ts";
import type { Scope } from "../core/types.ts";
import { analyzeQuery, type AnalyzedQuery } from "./query.ts";
import { DEFAULT_RANKING, rank, type Neighbour, type RankDoc, type RankStats, type RankingOptions } from "./rank.ts";
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

// Words too common to help ranking; kept short on purpose (the FTS engines stem the rest).
const STOP = new Set(
  "a an and are as at be but by did do does for from had has have he her his how i if in is it its me my of on or our she so that the their them they this to was we were what when where which who why will with you your".split(
    " ",
  ),
);

/** The query's searchable words: letters and digits only, so no FTS syntax can be injected. */
export function searchTerms(query: string): string[] {
  const words = query.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = words.filter((w) => !STOP.has(w));
  return [...new Set(kept.length > 0 ? kept : words)].slice(0, 32);
}

/** Candidates fetched per query: enough that truncation by the database's own rank rarely matters. */
const MAX_CANDIDATES = 400;
/** Candidates whose neighbours are fetched. */
const MAX_ANCHORS = 40;
/** Document-frequency counts stop here: past it a word's weight is near zero anyway. */
const DF_CAP = 5000;
/** CJK bigrams are matched with LIKE over this many of the workspace's latest messages. */
const CJK_SCAN = 5000;

interface Row {
  id: number | bigint;
  conversationId: string;
  key: string;
  isDm: number | boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  authorId: string | null;
  author: string | null;
  sessionId: string | null;
  createdAt: Date | string;
  text: string;
}

interface Loaded {
  doc: RankDoc;
  row: Row;
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
    q.terms.forEach((t, i) => df.set(t.key, Math.min(counts[i] ?? 0, DF_CAP)));
    const common = Math.max(2000, stats.docs * 0.25);
    const rare = q.terms.filter((t) => (df.get(t.key) ?? 0) > 0 && df.get(t.key)! <= common);
    const use = rare.length > 0 ? rare : q.terms;
    found = await sql.lexical(ctx, use.map((t) => t.word), MAX_CANDIDATES, true);
  }
  const named = resolveNames(people, q.nameWords);

  const loaded = new Map<number, Loaded>();
  const load = (r: Row): RankDoc => {
    const id = Number(r.id);
    let l = loaded.get(id);
    if (!l) {
      l = { row: r, doc: toDoc(r) };
      loaded.set(id, l);
    }
    return l.doc;
  };
  for (const r of [...found, ...cjk]) load(r);
  if (loaded.size === 0) return [];
  const matches = [...loaded.values()].map((l) => l.doc);
  const keys = new Set([...q.terms.map((t) => t.key), ...q.grams]);

  const neighbours: Neighbour[] = [];
  if (options.window > 0) {
    // Anchors: the best candidates by a cheap pre-score (query keys present, rarer ones weigh more).
    const count = new Map<string, number>();
    for (const d of matches) for (const k of new Set(d.keys)) if (keys.has(k)) count.set(k, (count.get(k) ?? 0) + 1);
    const weight = (k: string): number => 1 / Math.log(2 + (df.get(k) ?? count.get(k) ?? 1));
    const anchors = matches
      .map((d) => ({ d, s: [...new Set(d.keys)].reduce((n, k) => n + (keys.has(k) ? weight(k) : 0), 0) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, MAX_ANCHORS)
      .map((x) => x.d);
    for (const r of await sql.neighbours(ctx, anchors, options.window)) {
      neighbours.push({ anchor: n(r.anchor), offset: n(r.dir), doc: load(r) });
    }
  }

  const ranked = rank({ query: q, matches, neighbours, stats: { ...stats, df }, namedPeople: named, options });
  return ranked.slice(0, opts.limit).map(({ doc }) => {
    const r = loaded.get(doc.id)!.row;
    return {
      messageId: doc.id,
      conversationId: r.conversationId,
      conversationKey: r.key,
      isDm: r.isDm === true || r.isDm === 1,
      channelId: r.channelId,
      threadId: r.threadId,
      role: r.role,
      author: r.author,
      createdAt: doc.createdAt,
      snippet: makeSnippet(r.text, keys),
    };
  });
}

function toDoc(r: Row): RankDoc {
  const createdAt = r.createdAt instanceof Date ? r.createdAt : new Date(r.createdAt);
  return {
    id: Number(r.id),
    conversationId: r.conversationId,
    speaker: r.role === "assistant" ? "cairn" : (r.authorId ?? "someone"),
    authorId: r.authorId,
    sessionKey: sessionKey(r.sessionId, r.conversationId, createdAt),
    createdAt,
    text: r.text,
    keys: docKeys(r.text),
  };
}

/**
 * Messages of a cairn session share its id; messages no session claimed (channel talk cairn was
 * not part of) are grouped by conversation and UTC day. The SQL counts use the same key.
 */
export function sessionKey(sessionId: string | null, conversationId: string, createdAt: Date): string {
  return sessionId ?? `${conversationId}:${createdAt.toISOString().slice(0, 10)}`;
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

interface NeighbourRow extends Row {
  anchor: unknown;
  /** -1, -2 ... before the anchor; 1, 2 ... after it. */
  dir: unknown;
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
   * from the (conversationId, id) index first, so the rows are then read by primary key.
   */
  neighbours(ctx: Ctx, anchors: RankDoc[], window: number): Promise<NeighbourRow[]>;
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
const SQLITE_COLS = `m.id, m.conversationId AS conversationId, c.key, c.isDm AS isDm, c.channelId AS channelId, c.threadId AS threadId,
  m.role, m.authorId AS authorId, p.displayName AS author, m.sessionId AS sessionId, m.createdAt AS createdAt, m.text`;
const scopeParams = (ctx: Ctx): unknown[] => [ctx.scope.workspaceId, ctx.scope.personId, ctx.exclude];
const quoted = (words: string[]): string => words.map((w) => `"${w}"`).join(" OR ");

/** Scoped candidates from one FTS5 index (words or trigrams), best bm25 first when `ranked`. */
function sqliteMatch(ctx: Ctx, table: "message_fts" | "message_trgm", terms: string[], limit: number, ranked: boolean): Promise<Row[]> {
  return ctx.db.prisma.$queryRawUnsafe<Row[]>(
    `SELECT ${SQLITE_COLS}
       FROM ${table}
       JOIN "Message" m ON m.id = ${table}.rowid
       JOIN "Conversation" c ON c.id = m.conversationId
       LEFT JOIN "Person" p ON p.id = m.authorId
      WHERE ${table} MATCH ? AND ${SQLITE_SCOPE}
      ${ranked ? `ORDER BY bm25(${table}), m.id DESC` : ""}
      LIMIT ?`,
    quoted(terms),
    ...scopeParams(ctx),
    limit,
  );
}

const sqliteQueries: Queries = {
  async stats(ctx) {
    const rows = await ctx.db.prisma.$queryRawUnsafe<{ docs: unknown; avgChars: unknown; sessions: unknown }[]>(
      `SELECT count(*) AS docs, avg(length(m.text)) AS avgChars,
              count(DISTINCT COALESCE(m.sessionId, m.conversationId || ':' || substr(m.createdAt, 1, 10))) AS sessions
         FROM "Message" m JOIN "Conversation" c ON c.id = m.conversationId
        WHERE ${SQLITE_SCOPE}`,
      ...scopeParams(ctx),
    );
    const r = rows[0];
    return { docs: n(r?.docs), avgChars: n(r?.avgChars), sessions: n(r?.sessions) };
  },
  async df(ctx, words) {
    const parts = words.map(
      (_, i) => `SELECT ${i} AS i, (SELECT count(*) FROM (SELECT 1 FROM message_fts JOIN "Message" m ON m.id = message_fts.rowid
                 JOIN "Conversation" c ON c.id = m.conversationId WHERE message_fts MATCH ? AND ${SQLITE_SCOPE} LIMIT ${DF_CAP})) AS n`,
    );
    const rows = await ctx.db.prisma.$queryRawUnsafe<{ i: unknown; n: unknown }[]>(
      parts.join(" UNION ALL "),
      ...words.flatMap((w) => [`"${w}"`, ...scopeParams(ctx)]),
    );
    const out = words.map(() => 0);
    for (const r of rows) out[n(r.i)] = n(r.n);
    return out;
  },
  async people(ctx) {
    return ctx.db.prisma.$queryRawUnsafe<Person[]>(
      `SELECT id, displayName FROM "Person" WHERE workspaceId = ? AND displayName IS NOT NULL AND isBot = 0`,
      ctx.scope.workspaceId,
    );
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
    out.push(
      ...(await ctx.db.prisma.$queryRawUnsafe<Row[]>(
        `SELECT ${SQLITE_COLS}
           FROM (SELECT * FROM "Message" WHERE workspaceId = ? ORDER BY createdAt DESC LIMIT ${CJK_SCAN}) m
           JOIN "Conversation" c ON c.id = m.conversationId
           LEFT JOIN "Person" p ON p.id = m.authorId
          WHERE (${like}) AND ${SQLITE_SCOPE}
          LIMIT ?`,
        ctx.scope.workspaceId,
        ...q.grams.map((g) => `%${g}%`),
        ...scopeParams(ctx),
        limit,
      )),
    );
    return out;
  },
  async neighbours(ctx, anchors, window) {
    if (anchors.length === 0) return [];
    return ctx.db.prisma.$queryRawUnsafe<NeighbourRow[]>(
      // The anchors travel as one JSON parameter so the statement text stays short and the same
      // (preparing a statement with hundreds of placeholders cost more than running it). Each
      // neighbour id is one seek in the (conversationId, id) index; MATERIALIZED keeps SQLite from
      // pushing the joins below into every arm of the union, and CROSS JOIN keeps x first (left to
      // itself, the planner walked all of the workspace's messages and probed x for each).
      `WITH a AS (SELECT json_extract(value, '$[0]') AS anchor, json_extract(value, '$[1]') AS conv FROM json_each(?)),
            x AS MATERIALIZED (${neighbourArms(window, "a.conv", "a.anchor")})
       SELECT x.anchor, x.dir, ${SQLITE_COLS}
         FROM x
         CROSS JOIN "Message" m ON m.id = x.id
         JOIN "Conversation" c ON c.id = m.conversationId
         LEFT JOIN "Person" p ON p.id = m.authorId
        WHERE ${SQLITE_SCOPE}`,
      JSON.stringify(anchors.map((d) => [d.id, d.conversationId])),
      ...scopeParams(ctx),
    );
  },
};

/**
 * One arm per distance: the message `k` places before (dir -k) or after (dir k) each anchor in its
 * conversation, as a scalar subquery on the (conversationId, id) index. Works on both databases.
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

/** pg placeholders for the scope, numbered from `from`. */
const PG_SCOPE = (from: number): string =>
  `m."workspaceId" = $${from} AND (c."isDm" = false OR c."ownerId" = $${from + 1}) AND (m."sessionId" IS NULL OR m."sessionId" <> $${from + 2}) AND m.status <> 'failed'`;
const PG_COLS = `m.id, m."conversationId" AS "conversationId", c.key, c."isDm" AS "isDm", c."channelId" AS "channelId", c."threadId" AS "threadId",
  m.role, m."authorId" AS "authorId", p."displayName" AS author, m."sessionId" AS "sessionId", m."createdAt" AS "createdAt", m.text`;
const PG_FROM = `"Message" m JOIN "Conversation" c ON c.id = m."conversationId" LEFT JOIN "Person" p ON p.id = m."authorId"`;

const postgresQueries: Queries = {
  async stats(ctx) {
    const rows = await ctx.db.prisma.$queryRawUnsafe<{ docs: unknown; avgChars: unknown; sessions: unknown }[]>(
      `SELECT count(*) AS docs, avg(length(m.text))::float8 AS "avgChars",
              count(DISTINCT COALESCE(m."sessionId", m."conversationId" || ':' || to_char(m."createdAt", 'YYYY-MM-DD'))) AS sessions
         FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
        WHERE ${PG_SCOPE(1)}`,
      ...scopeParams(ctx),
    );
    const r = rows[0];
    return { docs: n(r?.docs), avgChars: n(r?.avgChars), sessions: n(r?.sessions) };
  },
  async df(ctx, words) {
    const values = words.map((_, i) => `(${i}, $${i + 4})`).join(", ");
    const rows = await ctx.db.prisma.$queryRawUnsafe<{ i: unknown; n: unknown }[]>(
      `SELECT t.i, (SELECT count(*) FROM (SELECT 1 FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
                     WHERE m.search @@ plainto_tsquery('english', t.w) AND ${PG_SCOPE(1)} LIMIT ${DF_CAP}) x) AS n
         FROM (VALUES ${values}) AS t(i, w)`,
      ...scopeParams(ctx),
      ...words,
    );
    const out = words.map(() => 0);
    for (const r of rows) out[n(r.i)] = n(r.n);
    return out;
  },
  async people(ctx) {
    return ctx.db.prisma.$queryRawUnsafe<Person[]>(
      `SELECT id, "displayName" AS "displayName" FROM "Person" WHERE "workspaceId" = $1 AND "displayName" IS NOT NULL AND "isBot" = false`,
      ctx.scope.workspaceId,
    );
  },
  async lexical(ctx, words, limit, ranked) {
    return ctx.db.prisma.$queryRawUnsafe<Row[]>(
      `SELECT ${PG_COLS}
         FROM ${PG_FROM} CROSS JOIN to_tsquery('english', $4) q
        WHERE m.search @@ q AND ${PG_SCOPE(1)}
        ${ranked ? "ORDER BY ts_rank_cd(m.search, q) DESC, m.id DESC" : ""}
        LIMIT $5`,
      ...scopeParams(ctx),
      words.join(" | "),
      limit,
    );
  },
  async cjk(ctx, q, limit) {
    // Each CJK character is a token of the `cjk` column, so a bigram is a two-token phrase.
    const tsquery = q.grams.map((g) => [...g].join(" <-> ")).join(" | ");
    return ctx.db.prisma.$queryRawUnsafe<Row[]>(
      `SELECT ${PG_COLS}
         FROM ${PG_FROM} CROSS JOIN to_tsquery('simple', $4) q
        WHERE m.cjk @@ q AND ${PG_SCOPE(1)}
        ORDER BY ts_rank_cd(m.cjk, q) DESC, m.id DESC
        LIMIT $5`,
      ...scopeParams(ctx),
      tsquery,
      limit,
    );
  },
  async neighbours(ctx, anchors, window) {
    if (anchors.length === 0) return [];
    return ctx.db.prisma.$queryRawUnsafe<NeighbourRow[]>(
      `WITH a AS (SELECT (e->>0)::int AS anchor, e->>1 AS conv FROM json_array_elements($4::json) e),
            x AS (${neighbourArms(window, "a.conv", "a.anchor")})
       SELECT x.anchor, x.dir, ${PG_COLS}
         FROM x JOIN ${PG_FROM} ON m.id = x.id
        WHERE ${PG_SCOPE(1)}`,
      ...scopeParams(ctx),
      JSON.stringify(anchors.map((d) => [d.id, d.conversationId])),
    );
  },
};

function ngrams(run: string, size: number): string[] {
  const chars = [...run];
  if (chars.length < size) return [];
  const out: string[] = [];
  for (let i = 0; i + size <= chars.length; i++) out.push(chars.slice(i, i + size).join(""));
  return out;
}
