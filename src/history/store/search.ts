/**
 * Search over stored messages: the one search that `session_search` (and any automatic recall)
 * uses. The databases find candidates - FTS5 (Porter) and an FTS5 trigram index on SQLite
 * (search-sqlite.ts), the english tsvector and a CJK character tsvector on PostgreSQL
 * (search-postgres.ts) - and count; ranking happens in rank.ts, the same for both. Here: what to
 * ask them and in what order, the workspace figures kept between searches, and the hits made of
 * what rank() keeps.
 *
 * Invariant: results come only from conversations the asker may see, enforced in the WHERE clause
 * of every statement (search-queries.ts): the asker's workspace, and among its DMs only the
 * asker's own.
 */
import type { Database } from "../../db/client.ts";
import type { Scope } from "../../ground/types.ts";
import { analyzeQuery } from "../query.ts";
import { countTerms, DEFAULT_RANKING, rank, type Neighbour, type RankDoc, type RankingOptions, type TermCounts } from "../rank.ts";
import { postgresQueries } from "./search-postgres.ts";
import { DF_CAP, readsKnowledge, type Ctx, type Person, type Row, type Shown } from "./search-queries.ts";
import { sqliteQueries } from "./search-sqlite.ts";
import { historyIndex } from "./history-index-sqlite.ts";
import { nearestMessages, type QueryVector } from "./search-vectors.ts";
import { collectionStats, documentFrequencies, keptDocs } from "./collection-stats.ts";
import { fuseRanks } from "../../ground/vector.ts";
import { checkedOnRows } from "../../db/checked-on-rows.ts";
import { docKeys, fold, makeSnippet } from "../text.ts";
import { isFiltered, passes, type HistoryFilter } from "./filter.ts";

export interface SearchHit {
  messageId: number;
  conversationId: string;
  conversationKey: string;
  isDm: boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  author: string | null;
  /** The author's person id (session_search's author filter); null for cairn's own messages. */
  authorId: string | null;
  /** Its session as ranking groups them (`sessionKey`): what session_search's session mode reads. */
  sessionKey: string;
  createdAt: Date;
  snippet: string;
  /** A listened channel's message (role "channel"): where it is on the platform, to cite. */
  link: string | null;
}

export interface SearchOptions {
  limit: number;
  /** Messages of this session are already in the prompt: leave them out. */
  excludeSessionId?: string | null;
  /**
   * Listened channels whose knowledge the asker can read now (platform channel ids); none by
   * default, so a caller that does not know leaves every channel's knowledge out.
   */
  readable?: readonly string[];
  /** Ranking levers; the defaults are what cairn uses. For benchmarks that switch levers off. */
  ranking?: Partial<RankingOptions>;
  /**
   * The query's vector, when embeddings are on and it came in time: the messages in scope nearest
   * it are fused with the word ranking (reciprocal rank fusion, ground/vector.ts). Without it, words alone.
   */
  vector?: QueryVector | undefined;
  /**
   * What the asker said just before the search (their latest messages, the one being answered
   * among them): of what the query finds, the sessions that share its other words come first.
   */
  context?: readonly string[];
  /**
   * Only messages these let through (session_search's after, before, author, channel): candidates are
   * found among them, in the database, and so is every hit.
   */
  filter?: HistoryFilter;
}

/** Candidates fetched per query: enough that truncation by the database's own rank rarely matters. */
const MAX_CANDIDATES = 400;
/** A workspace with more messages than this has its words counted before its first look (searchMessages). */
const BIG_SCOPE = 25 * MAX_CANDIDATES;
/** Candidates whose neighbours are fetched. */
const MAX_ANCHORS = 40;

export async function searchMessages(db: Database, scope: Scope, query: string, opts: SearchOptions): Promise<SearchHit[]> {
  const q = analyzeQuery(query);
  const vector = opts.vector;
  if (q.terms.length === 0 && q.grams.length === 0 && !vector) return [];
  const options: RankingOptions = { ...DEFAULT_RANKING, ...opts.ranking };
  const sql = db.provider === "sqlite" ? sqliteQueries : postgresQueries;
  // SQLite indexes history in batches: what was stored before the search is indexed first.
  if (db.provider === "sqlite") await historyIndex(db.direct).ready();
  const filter = opts.filter ?? {};
  const narrow = isFiltered(filter);
  const ctx: Ctx = { database: db, scope, exclude: opts.excludeSessionId ?? "", readable: JSON.stringify(opts.readable ?? []), filter };
  const words = q.terms.map((t) => t.word);
  // Each word's count in scope comes first (kept a while, collection-stats.ts; a rare word's is
  // cheap): a word in more than MAX_CANDIDATES messages means they do not all fit, and the first,
  // unranked look would only be thrown away for the ranked one below. On channel knowledge that
  // look was a newest-first scan past the matches of every channel the asker cannot read; on
  // PostgreSQL, a sequential scan through kept messages. (Counts are per asker, not per session
  // left out: were a session to hold most of a word's matches, they would fit after all, and
  // are then read by their rarer words, as when they do not.)
  // Only where a scan could be long: channel knowledge, or a workspace of more than BIG_SCOPE
  // messages (as last counted). In a smaller one the unranked look stops at its LIMIT sooner than a
  // count returns (LoCoMo, PostgreSQL: p50 3.9 ms, 5.2 with the count first); there it runs at once,
  // and words are counted only when the matches do not fit.
  const asker = askerKey(ctx);
  const countFirst = readsKnowledge(ctx) || (keptDocs(db, scope.workspaceId) ?? 0) > BIG_SCOPE;
  const count = () => (words.length > 0 ? documentFrequencies(db, asker, words, (missing) => sql.df(ctx, missing)) : Promise.resolve([]));
  const counting = countFirst ? count() : null;
  const many = counting ? counting.then((counts) => counts.some((n) => n > MAX_CANDIDATES)) : Promise.resolve(false);

  const [stats, people, lexical, cjk, closest] = await Promise.all([
    collectionStats(db, scope.workspaceId, () => sql.stats(ctx)),
    options.author > 0 && q.nameWords.length > 0 ? cached(ctx, "people", () => sql.people(ctx)) : Promise.resolve([]),
    many.then((skip) => (words.length > 0 && !skip ? sql.lexical(ctx, words, MAX_CANDIDATES + 1, false, false, countFirst) : [])),
    q.grams.length > 0 ? sql.cjk(ctx, q, MAX_CANDIDATES) : Promise.resolve([]),
    vector ? nearestMessages(ctx, vector, opts.limit * 2) : Promise.resolve([]),
  ]);
  let found = lexical;
  // When every match fits, document frequencies are counted among the candidates (exact) and the
  // database need not rank them. When they do not, the database's counts are used, words found in
  // most of the scope's messages are left out of the candidate query (they would flood it; they
  // still count in the score of the rest), and its own rank picks which candidates to keep.
  const df = new Map<string, number>();
  if ((await many) || lexical.length > MAX_CANDIDATES) {
    const counts = await (counting ?? count());
    // Forms of one word ("go", "went") share a key: a message holds one or the other, so they add up.
    q.terms.forEach((t, i) => df.set(t.key, Math.min((df.get(t.key) ?? 0) + (counts[i] ?? 0), DF_CAP)));
    const common = Math.max(2000, stats.docs * 0.25);
    // A count that reached the cap is common whatever the scope's size: it cannot be told apart
    // from one in every message (channel knowledge, counted apart from `docs`, reaches it first).
    const rare = q.terms.filter((t) => (df.get(t.key) ?? 0) > 0 && df.get(t.key)! <= common && df.get(t.key)! < DF_CAP);
    const use = rare.length > 0 ? rare : q.terms;
    found = await sql.lexical(ctx, use.map((t) => t.word), MAX_CANDIDATES, true, rare.length === 0);
  }
  const named = resolveNames(people, q.nameWords);

  const matches = found.map((r) => toDoc(r, 0));
  if (cjk.length > 0) {
    const seen = new Set(found.map((r) => r[0]));
    for (const r of cjk) if (!seen.has(r[0]) && seen.add(r[0])) matches.push(toDoc(r, 0));
  }
  const nearest = closest.map((r) => toDoc(r, 0));
  if (matches.length === 0 && nearest.length === 0) return [];
  const terms = countTerms(q, matches);

  // Neighbours share their anchor's conversation, so the candidates' conversations are all a hit
  // can be in; their authors are nearly all a hit can have (the rest are looked up after ranking).
  // Both come back with the neighbours: one statement, one round trip.
  const seen = [...matches, ...nearest];
  const show: Shown = { conversationIds: [...new Set(seen.map((d) => d.conversationId))], authorIds: authorsOf(seen) };
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

  const context = opts.context?.length ? contextKeys(opts.context) : undefined;
  // Filtered, every document is ranked and the filter picks the best it lets through: a neighbour
  // (found beside a candidate, not by the filtered statements) can rank high and still be outside it.
  const want = narrow ? undefined : nearest.length > 0 ? opts.limit * 2 : opts.limit;
  const byWords =
    matches.length > 0 ? rank({ query: q, matches, neighbours, stats: { ...stats, df }, namedPeople: named, options, ...(want ? { limit: want } : {}), terms, ...(context ? { context } : {}) }) : [];
  const conversations = new Map(shown.conversations.map((c) => [c[0], c]));
  const kept = (doc: RankDoc): boolean => {
    const c = conversations.get(doc.conversationId);
    return c !== undefined && passes(filter, doc, { isDm: c[2] === true || c[2] === 1, channelId: c[3] });
  };
  const wordsKept = narrow ? byWords.filter((r) => kept(r.doc)) : byWords;
  const ranked = nearest.length > 0 ? fuseRanks([wordsKept.map((r) => r.doc).slice(0, opts.limit * 2), nearest], (d) => d.id).slice(0, opts.limit).map((doc) => ({ doc })) : wordsKept.slice(0, opts.limit);
  if (ranked.length === 0) return [];
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
      authorId: doc.authorId,
      sessionKey: doc.sessionKey,
      createdAt: doc.createdAt,
      snippet: makeSnippet(doc.text, keys),
      link: null,
    });
  }
  return withLinks(db, scope, hits);
}

/**
 * The links of the hits that are channel knowledge, read by id in the asker's workspace (checked on
 * the rows found by id, never used to find them: db/checked-on-rows.ts).
 */
async function withLinks(db: Database, scope: Scope, hits: SearchHit[]): Promise<SearchHit[]> {
  const ids = hits.filter((h) => h.role === "channel").map((h) => h.messageId);
  if (ids.length === 0) return hits;
  const sql =
    db.provider === "sqlite"
      ? `SELECT id, link FROM "Message" WHERE id IN (SELECT value FROM json_each(?)) AND ${checkedOnRows("sqlite", "workspaceId", "?")}`
      : `SELECT id, link FROM "Message" WHERE id IN (SELECT json_array_elements_text($1::json)::int) AND ${checkedOnRows("postgresql", "workspaceId", "$2")}`;
  const links = new Map((await db.direct.rows(sql, [JSON.stringify(ids), scope.workspaceId])).map((r) => [Number(r[0]), r[1] as string | null]));
  return hits.map((h) => (h.role === "channel" ? { ...h, link: links.get(h.messageId) ?? null } : h));
}

/** Context read, at most: a pasted log in the conversation should not become the topic. */
const MAX_CONTEXT_KEYS = 64;

/** The ranking keys of the conversation's words, the latest message's first, without repeats. */
function contextKeys(texts: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const text of [...texts].reverse()) {
    for (const k of docKeys(text)) {
      if (keys.size >= MAX_CONTEXT_KEYS) return [...keys];
      keys.add(k);
    }
  }
  return [...keys];
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

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Messages of a cairn session share its id; messages no session claimed (channel talk cairn was
 * not part of) are grouped by conversation and UTC day (the day's number since the epoch: one
 * short string per message instead of a date formatted and cut). The SQL counts group the same way.
 */
export function sessionKey(sessionId: string | null, conversationId: string, createdAt: Date): string {
  return sessionId ?? `${conversationId}:${Math.floor(createdAt.getTime() / DAY_MS)}`;
}

/**
 * Names of people are reused for a short while: a few seconds' staleness only misses a person who
 * just joined; results are never read from the cache. The message and session counts and the
 * document frequencies per asker are kept longer (collection-stats.ts).
 */
const CACHE_TTL_MS = 30_000;
const caches = new WeakMap<Database, Map<string, { at: number; value: unknown }>>();

/** The asker's figures are theirs: their DMs and the channels they can read weigh into them. */
const askerKey = (ctx: Ctx): string => `${ctx.scope.workspaceId}|${ctx.scope.personId}|${ctx.readable}`;

/** The cached value under `key` while it is fresh, else `make()`'s, stored now. */
function freshEntry<T>(ctx: Ctx, key: string, make: () => T): T {
  let cache = caches.get(ctx.database);
  if (!cache) {
    cache = new Map();
    caches.set(ctx.database, cache);
  }
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.value as T;
  if (cache.size > 2000) cache.clear();
  const value = make();
  cache.set(key, { at: Date.now(), value });
  return value;
}

function freshValue<T>(ctx: Ctx, key: string): T | undefined {
  const hit = caches.get(ctx.database)?.get(key);
  return hit && Date.now() - hit.at < CACHE_TTL_MS ? (hit.value as T) : undefined;
}

async function cached<T>(ctx: Ctx, what: "people", load: () => Promise<T>): Promise<T> {
  const key = `${what}|${ctx.scope.workspaceId}`;
  const hit = freshValue<T>(ctx, key);
  if (hit !== undefined) return hit;
  const value = await load();
  return freshEntry(ctx, key, () => value);
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
