/**
 * Ranking of history search candidates. The databases only find candidates (full-text matches and
 * their neighbouring messages) and count; the score is computed here, so SQLite and PostgreSQL
 * rank alike and every lever can be measured (bench/recall.ts) and switched off on its own.
 *
 * The score of a message, in order of how much each lever gave on LoCoMo (bench/README.md):
 * 1. BM25 over Porter stems (k1 1.2, b 0.4: chat messages vary in length less than documents do,
 *    and a short "yes, Lisbon" should not win on length alone).
 * 2. Neighbours: a message is read with the messages around it. An answer rarely repeats the words
 *    of the question it answers, so the message right after a matching question inherits most of
 *    its score, and so does an elaboration (A says something, B asks about it, A answers); nearer
 *    messages lend a little. A message that matches no word itself is returned only as part of an
 *    exchange: the matching message or the one between them is by a different person (or cairn),
 *    never a bystander's run of messages that happens to follow. A strong match lends a little more
 *    than in proportion to its score (lendCurve), a match on one common word a little less.
 * 3. Session: what else was said in the same session (or the same day of the conversation) - a
 *    BM25 over whole sessions - so a message from the session about the topic beats a stray one.
 * 4. People: a question naming one person ("what did Alice say about ...") prefers their messages.
 * 5. Dates: a question naming a date prefers messages written then; a question asking when
 *    ("when did we move the replicas?") prefers messages that say when ("yesterday", "last week").
 * 6. The conversation around the search: of what the query found, the sessions that share words
 *    with what the asker just said (words the query left out) are the ones they mean.
 */
import { dateMatch, saysWhen, type AnalyzedQuery } from "./query.ts";

export interface RankingOptions {
  k1: number;
  b: number;
  /** Neighbours looked at on each side. 0 switches the lever off. */
  window: number;
  /** Share of the previous message's score passed on when that message is a question. */
  afterQuestion: number;
  /**
   * Share passed on two messages later when the message between is another person's question: the
   * elaboration of what was said ("I went on a picnic" - "what did you play?" - "charades").
   */
  followUp: number;
  /** Share passed from earlier messages otherwise, and from later ones. */
  fromBefore: number;
  fromAfter: number;
  /** Messages further apart than this are not neighbours (a new session of the conversation). */
  neighbourGapMs: number;
  /** Weight of the session score, relative to the best message score (1). 0 = off. */
  session: number;
  /** Bonus for messages by the one person the query names. 0 = off. */
  author: number;
  /** Bonus for messages written on a date the query names (times dateMatch). 0 = off. */
  date: number;
  /** Bonus for messages that say when (yesterday, last week, on Friday) when the query asks when. 0 = off. */
  when: number;
  /**
   * How a neighbour's share grows with the lender's own score: share x score x (score / best)^(n-1).
   * 1 is proportional; above 1 a message matching the query strongly lends more than one that
   * matched a single common word, whose replies are mostly about something else. 1 = off.
   */
  lendCurve: number;
  /**
   * Bonus for the sessions that share words with the conversation around the search (RankInput
   * context), in proportion to the best such session's share. 0 = off.
   */
  context: number;
}

export const DEFAULT_RANKING: RankingOptions = {
  k1: 1.2,
  b: 0.4,
  window: 2,
  afterQuestion: 0.9,
  followUp: 0.45,
  fromBefore: 0.15,
  fromAfter: 0.35,
  neighbourGapMs: 3 * 60 * 60 * 1000,
  session: 0.4,
  author: 0.5,
  date: 1.2,
  when: 0.3,
  lendCurve: 1.25,
  // Not tuned on a data set (LoCoMo's questions come without a conversation): below the author
  // bonus, so a message that answers the query clearly better still wins; enough to decide between
  // two that answer it alike (test/integration/search-context.test.ts).
  context: 0.25,
};

/** A stored message as ranking sees it. */
export interface RankDoc {
  id: number;
  conversationId: string;
  /** Who wrote it: a person's id, or "cairn" for the assistant's replies. */
  speaker: string;
  authorId: string | null;
  /** The stored role (user, assistant, context), for results; ranking reads `speaker`. */
  role?: string;
  sessionKey: string;
  createdAt: Date;
  text: string;
  /** Ranking keys of the text (see docKeys). */
  keys: string[];
}

export interface RankStats {
  /** Messages in scope. */
  docs: number;
  /** Their average length in characters. */
  avgChars: number;
  /** Sessions in scope (distinct session keys). */
  sessions: number;
  /** Messages in scope containing each key; a key missing here is counted among the candidates. */
  df: ReadonlyMap<string, number>;
}

/** `offset` of `doc` relative to `anchor`: -1 is the message just before it in its conversation. */
export interface Neighbour {
  anchor: number;
  offset: number;
  doc: RankDoc;
}

export interface RankInput {
  query: AnalyzedQuery;
  /** Full-text candidates (they match at least one key). */
  matches: RankDoc[];
  neighbours: Neighbour[];
  stats: RankStats;
  /** The people the query names (resolved names); the author lever needs exactly one. */
  namedPeople: readonly string[];
  options: RankingOptions;
  /** Only this many best results are returned (all when unset). */
  limit?: number;
  /** countTerms(query, matches), when the caller already has it. */
  terms?: TermCounts;
  /**
   * Ranking keys (docKeys) of what the asker said just before the search: the topic a short query
   * leaves out. Only reorders what the query found.
   */
  context?: readonly string[];
}

export interface Ranked {
  doc: RankDoc;
  score: number;
  /** True when the message matched words of the query itself (not only through neighbours). */
  matched: boolean;
}

/**
 * How often each query key occurs in each candidate, as one flat array (row per document, column
 * per key) rather than a Map per document: a search ranks hundreds of candidates, and per-document
 * objects were a good part of what each search allocated (and so of how often the collector ran).
 */
export interface TermCounts {
  keys: string[];
  /** docs.length rows of keys.length counts. */
  tf: Uint16Array;
}

export function queryKeys(query: AnalyzedQuery): string[] {
  const keys = new Set<string>();
  for (const t of query.terms) keys.add(t.key);
  for (const g of query.grams) keys.add(g);
  return [...keys];
}

export function countTerms(query: AnalyzedQuery, docs: readonly RankDoc[]): TermCounts {
  const keys = queryKeys(query);
  const column = new Map<string, number>();
  keys.forEach((k, j) => column.set(k, j));
  const width = keys.length;
  const tf = new Uint16Array(docs.length * width);
  for (let i = 0; i < docs.length; i++) {
    for (const k of docs[i]!.keys) {
      const j = column.get(k);
      if (j !== undefined && tf[i * width + j]! < 0xffff) tf[i * width + j]!++;
    }
  }
  return { keys, tf };
}

const idf = (n: number, total: number): number => Math.log(1 + (Math.max(total, n) - n + 0.5) / (n + 0.5));

/**
 * saysWhen of a document, remembered by its keys array: docKeys returns the same array for the same
 * text while it is cached, so a message met again in a later search costs a WeakMap look-up rather
 * than a regular expression over its text (a search that asks when reads a few hundred).
 */
const saysWhenOf = new WeakMap<readonly string[], boolean>();
function docSaysWhen(d: RankDoc): boolean {
  let v = saysWhenOf.get(d.keys);
  if (v === undefined) {
    v = saysWhen(d.text);
    saysWhenOf.set(d.keys, v);
  }
  return v;
}

export function isQuestion(text: string): boolean {
  return text.includes("?") || text.includes("？");
}

/**
 * Documents are addressed by their position (matches first, then neighbours new to the ranking) and
 * every per-document figure lives in a typed array: no Map keyed by id, no string keys for pairs.
 */
export function rank(input: RankInput): Ranked[] {
  const { query, matches, neighbours, stats, options: o } = input;
  const { keys, tf } = input.terms ?? countTerms(query, matches);
  const width = keys.length;
  const m = matches.length;

  // All documents by position: the matches, then each neighbour's. A message can come more than
  // once (the neighbour of two anchors, or a match itself); the first of its positions stands for it
  // (`first`), found by id through positions sorted by id rather than a Map.
  const docs: RankDoc[] = matches.slice();
  if (o.window > 0) for (const n of neighbours) docs.push(n.doc);
  const count = docs.length;
  const byId = new Int32Array(count);
  for (let i = 0; i < count; i++) byId[i] = i;
  byId.sort((a, b) => docs[a]!.id - docs[b]!.id || a - b);
  const first = new Int32Array(count);
  for (let k = 0; k < count; k++) {
    const i = byId[k]!;
    first[i] = k > 0 && docs[byId[k - 1]!]!.id === docs[i]!.id ? first[byId[k - 1]!]! : i;
  }
  const find = (id: number): number => {
    let lo = 0;
    let hi = count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = docs[byId[mid]!]!.id;
      if (v === id) return first[byId[mid]!]!;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };

  const candidateDf = new Float64Array(width);
  for (let i = 0; i < m; i++) for (let j = 0; j < width; j++) if (tf[i * width + j]! > 0) candidateDf[j]!++;
  const total = Math.max(stats.docs, m);
  const weight = new Float64Array(width);
  for (let j = 0; j < width; j++) weight[j] = idf(Math.max(stats.df.get(keys[j]!) ?? 0, candidateDf[j]!, 1), total);

  // 1. BM25 of each candidate's own text.
  const avg = Math.max(stats.avgChars, 1);
  const own = new Float64Array(count);
  for (let i = 0; i < m; i++) {
    if (first[i] !== i) continue;
    let s = 0;
    const norm = o.k1 * (1 - o.b + (o.b * matches[i]!.text.length) / avg);
    for (let j = 0; j < width; j++) {
      const f = tf[i * width + j]!;
      if (f > 0) s += (weight[j]! * f * (o.k1 + 1)) / (f + norm);
    }
    own[i] = s;
  }

  // 2. Neighbours lend score both ways: the anchor from its neighbours, the neighbour from the anchor.
  // What a message lends grows a little faster than its own score (lendCurve): the exchange around a
  // message that matches the query well is about the query; the reply to a message that matched one
  // common word of it usually is not.
  let best = 0;
  for (let i = 0; i < m; i++) if (own[i]! > best) best = own[i]!;
  const lent = new Float64Array(count);
  const lend = (to: number, from: number, offset: number, between: number): void => {
    // `offset` is where `from` sits relative to `to`; `between` is the message between them, or -1.
    const s = own[from]!;
    if (s === 0 || Math.abs(offset) > o.window) return;
    const t = docs[to]!;
    const f = docs[from]!;
    if (Math.abs(t.createdAt.getTime() - f.createdAt.getTime()) > o.neighbourGapMs) return;
    // A message that matches nothing itself only counts as part of an exchange with `from`.
    const b = between < 0 ? undefined : docs[between]!;
    const asked = b !== undefined && b.speaker !== f.speaker && isQuestion(b.text);
    if (!own[to] && t.speaker === f.speaker && (b === undefined || b.speaker === t.speaker)) return;
    let share = o.fromAfter;
    if (offset === -1 && isQuestion(f.text)) share = o.afterQuestion;
    else if (offset === -2 && asked && !isQuestion(t.text)) share = o.followUp;
    else if (offset < 0) share = o.fromBefore;
    lent[to] = lent[to]! + share * s * (o.lendCurve === 1 ? 1 : Math.pow(s / best, o.lendCurve - 1));
  };
  if (o.window > 0 && neighbours.length > 0) {
    // The message just before and just after each anchor, to find the one between two that are two apart.
    const before = new Int32Array(count).fill(-1);
    const after = new Int32Array(count).fill(-1);
    const anchor = new Int32Array(neighbours.length);
    neighbours.forEach((n, j) => {
      const a = (anchor[j] = find(n.anchor));
      if (a < 0) return;
      if (n.offset === -1) before[a] = first[m + j]!;
      else if (n.offset === 1) after[a] = first[m + j]!;
    });
    // Each pair once (both of two neighbouring anchors list the other), as one number.
    const seen = new Set<number>();
    for (let j = 0; j < neighbours.length; j++) {
      const n = neighbours[j]!;
      const a = anchor[j]!;
      const x = first[m + j]!;
      if (a < 0 || x === a) continue;
      const pair = x < a ? x * count + a : a * count + x;
      if (seen.has(pair)) continue;
      seen.add(pair);
      const between = n.offset === 2 ? after[a]! : n.offset === -2 ? before[a]! : -1;
      lend(a, x, n.offset, between);
      lend(x, a, -n.offset, between);
    }
  }

  const score = new Float64Array(count);
  let top = 0;
  for (let i = 0; i < count; i++) {
    score[i] = own[i]! + lent[i]!;
    if (score[i]! > top) top = score[i]!;
  }
  if (top === 0) return [];

  // 3. Sessions: BM25 over each session's matched text (tf summed over its messages, no length norm).
  const sessionOf = new Int32Array(count).fill(-1);
  let topSession = 0;
  let sessionScore: Float64Array | undefined;
  if (o.session > 0) {
    const sessionAt = new Map<string, number>();
    for (let i = 0; i < m; i++) {
      let s = sessionAt.get(docs[i]!.sessionKey);
      if (s === undefined) sessionAt.set(docs[i]!.sessionKey, (s = sessionAt.size));
      sessionOf[i] = s;
    }
    for (let i = m; i < count; i++) if (first[i] === i) sessionOf[i] = sessionAt.get(docs[i]!.sessionKey) ?? -1;
    const sessionTf = new Float64Array(sessionAt.size * width);
    for (let i = 0; i < m; i++) {
      if (first[i] !== i) continue;
      for (let j = 0; j < width; j++) sessionTf[sessionOf[i]! * width + j]! += tf[i * width + j]!;
    }
    const sessionDf = new Float64Array(width);
    for (let s = 0; s < sessionAt.size; s++) for (let j = 0; j < width; j++) if (sessionTf[s * width + j]! > 0) sessionDf[j]!++;
    const sessions = Math.max(stats.sessions, sessionAt.size);
    sessionScore = new Float64Array(sessionAt.size);
    for (let s = 0; s < sessionAt.size; s++) {
      let v = 0;
      for (let j = 0; j < width; j++) {
        const f = sessionTf[s * width + j]!;
        if (f > 0) v += (idf(sessionDf[j]!, sessions) * f * (o.k1 + 1)) / (f + o.k1);
      }
      sessionScore[s] = v;
      if (v > topSession) topSession = v;
    }
  }

  const topical = o.context > 0 && input.context && input.context.length > 0 ? contextShares(docs, first, keys, input.context) : null;
  const named = input.namedPeople.length === 1 ? input.namedPeople[0] : undefined;
  const order: number[] = [];
  for (let i = 0; i < count; i++) {
    if (!(score[i]! > 0)) continue;
    const d = docs[i]!;
    let v = score[i]! / top;
    if (sessionScore && topSession > 0 && sessionOf[i]! >= 0) v += (o.session * sessionScore[sessionOf[i]!]!) / topSession;
    if (named !== undefined && o.author > 0 && d.authorId === named) v += o.author;
    if (query.asksWhen && o.when > 0 && docSaysWhen(d)) v += o.when;
    if (query.dates.length > 0 && o.date > 0) v += o.date * dateMatch(d.createdAt, query.dates);
    if (topical) v += o.context * (topical.get(d.sessionKey) ?? 0);
    score[i] = v;
    order.push(i);
  }
  // Ties go to the newer message: in chat, the later word on a topic is usually the current one.
  // (The comparator returns small integers: a fractional difference would be boxed on each call.)
  order.sort((a, b) => (score[b]! > score[a]! ? 1 : score[b]! < score[a]! ? -1 : docs[b]!.id - docs[a]!.id));
  const out: Ranked[] = [];
  for (const i of order.slice(0, input.limit ?? order.length)) out.push({ doc: docs[i]!, score: score[i]!, matched: own[i]! > 0 });
  return out;
}

/**
 * Each session's share of the conversation's words, 0-1 (the best session 1): the words of
 * `context` that the query does not hold, each weighted by how rare it is among the candidates
 * (a word in every one of them tells none apart), summed over the words a session's candidates
 * hold. Null when no candidate holds any.
 */
function contextShares(docs: readonly RankDoc[], first: Int32Array, queryKeys: readonly string[], context: readonly string[]): Map<string, number> | null {
  const skip = new Set(queryKeys);
  const words = new Map<string, number>();
  for (const k of context) if (!skip.has(k) && !words.has(k)) words.set(k, words.size);
  if (words.size === 0) return null;
  const docsWith = new Float64Array(words.size);
  const inSession = new Map<string, Set<number>>();
  let distinct = 0;
  for (let i = 0; i < docs.length; i++) {
    if (first[i] !== i) continue;
    distinct++;
    const d = docs[i]!;
    const held = new Set<number>();
    for (const k of d.keys) {
      const w = words.get(k);
      if (w !== undefined) held.add(w);
    }
    if (held.size === 0) continue;
    for (const w of held) docsWith[w]!++;
    const s = inSession.get(d.sessionKey);
    if (s) for (const w of held) s.add(w);
    else inSession.set(d.sessionKey, held);
  }
  if (inSession.size === 0) return null;
  const weight = Array.from(docsWith, (n) => (n > 0 ? idf(n, distinct) : 0));
  const shares = new Map<string, number>();
  let best = 0;
  for (const [session, held] of inSession) {
    let v = 0;
    for (const w of held) v += weight[w]!;
    shares.set(session, v);
    if (v > best) best = v;
  }
  if (!(best > 0)) return null;
  for (const [session, v] of shares) shares.set(session, v / best);
  return shares;
}
