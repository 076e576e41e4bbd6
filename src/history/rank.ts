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
 *    never a bystander's run of messages that happens to follow.
 * 3. Session: what else was said in the same session (or the same day of the conversation) - a
 *    BM25 over whole sessions - so a message from the session about the topic beats a stray one.
 * 4. People: a question naming one person ("what did Alice say about ...") prefers their messages.
 * 5. Dates: a question naming a date prefers messages written then.
 */
import { dateMatch, type AnalyzedQuery } from "./query.ts";

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
};

/** A stored message as ranking sees it. */
export interface RankDoc {
  id: number;
  conversationId: string;
  /** Who wrote it: a person's id, or "cairn" for the assistant's replies. */
  speaker: string;
  authorId: string | null;
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
}

export interface Ranked {
  doc: RankDoc;
  score: number;
  /** True when the message matched words of the query itself (not only through neighbours). */
  matched: boolean;
}

const idf = (n: number, total: number): number => Math.log(1 + (Math.max(total, n) - n + 0.5) / (n + 0.5));

export function isQuestion(text: string): boolean {
  return text.includes("?") || text.includes("？");
}

export function rank(input: RankInput): Ranked[] {
  const { query, matches, neighbours, stats, options: o } = input;
  const keys = new Set([...query.terms.map((t) => t.key), ...query.grams]);
  const tf = new Map<number, Map<string, number>>();
  const candidateDf = new Map<string, number>();
  for (const d of matches) {
    const counts = new Map<string, number>();
    for (const k of d.keys) if (keys.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
    tf.set(d.id, counts);
    for (const k of counts.keys()) candidateDf.set(k, (candidateDf.get(k) ?? 0) + 1);
  }
  const docs = Math.max(stats.docs, matches.length);
  const weight = new Map<string, number>();
  for (const k of keys) weight.set(k, idf(Math.max(stats.df.get(k) ?? 0, candidateDf.get(k) ?? 0, 1), docs));

  // 1. BM25 of each candidate's own text.
  const avg = Math.max(stats.avgChars, 1);
  const own = new Map<number, number>();
  for (const d of matches) {
    let s = 0;
    const norm = o.k1 * (1 - o.b + (o.b * d.text.length) / avg);
    for (const [k, f] of tf.get(d.id)!) s += (weight.get(k)! * f * (o.k1 + 1)) / (f + norm);
    own.set(d.id, s);
  }

  // 2. Neighbours lend score both ways: the anchor from its neighbours, the neighbour from the anchor.
  const byId = new Map<number, RankDoc>(matches.map((d) => [d.id, d]));
  const lent = new Map<number, number>();
  // Each anchor's neighbours by offset, to find the message between two that are two apart.
  const around = new Map<string, RankDoc>();
  for (const n of neighbours) around.set(`${n.anchor}:${n.offset}`, n.doc);
  const lend = (to: RankDoc, from: RankDoc, offset: number, between: RankDoc | undefined): void => {
    // `offset` is where `from` sits relative to `to`; `between` is the message between them, if any.
    const s = own.get(from.id) ?? 0;
    if (s === 0 || Math.abs(offset) > o.window) return;
    if (Math.abs(to.createdAt.getTime() - from.createdAt.getTime()) > o.neighbourGapMs) return;
    // A message that matches nothing itself only counts as part of an exchange with `from`.
    const asked = between !== undefined && between.speaker !== from.speaker && isQuestion(between.text);
    if (!own.get(to.id) && to.speaker === from.speaker && (between === undefined || between.speaker === to.speaker)) return;
    let share = o.fromAfter;
    if (offset === -1 && isQuestion(from.text)) share = o.afterQuestion;
    else if (offset === -2 && asked && !isQuestion(to.text)) share = o.followUp;
    else if (offset < 0) share = o.fromBefore;
    lent.set(to.id, (lent.get(to.id) ?? 0) + share * s);
  };
  if (o.window > 0) {
    const seen = new Set<string>();
    for (const n of neighbours) {
      const anchor = byId.get(n.anchor);
      if (!anchor || n.doc.id === anchor.id) continue;
      const pair = n.doc.id < anchor.id ? `${n.doc.id}:${anchor.id}` : `${anchor.id}:${n.doc.id}`;
      if (seen.has(pair)) continue;
      seen.add(pair);
      if (!byId.has(n.doc.id)) byId.set(n.doc.id, n.doc);
      const other = byId.get(n.doc.id)!;
      const between = Math.abs(n.offset) === 2 ? around.get(`${anchor.id}:${Math.sign(n.offset)}`) : undefined;
      lend(anchor, other, n.offset, between);
      lend(other, anchor, -n.offset, between);
    }
  }

  const base = new Map<number, number>();
  for (const d of byId.values()) {
    const s = (own.get(d.id) ?? 0) + (lent.get(d.id) ?? 0);
    if (s > 0) base.set(d.id, s);
  }
  const top = Math.max(0, ...base.values());
  if (top === 0) return [];

  // 3. Sessions: BM25 over each session's matched text (tf summed over its messages, no length norm).
  const sessionScore = new Map<string, number>();
  if (o.session > 0) {
    const sessionTf = new Map<string, Map<string, number>>();
    for (const d of matches) {
      const counts = sessionTf.get(d.sessionKey) ?? new Map<string, number>();
      for (const [k, f] of tf.get(d.id)!) counts.set(k, (counts.get(k) ?? 0) + f);
      sessionTf.set(d.sessionKey, counts);
    }
    const sessionDf = new Map<string, number>();
    for (const counts of sessionTf.values()) for (const k of counts.keys()) sessionDf.set(k, (sessionDf.get(k) ?? 0) + 1);
    const sessions = Math.max(stats.sessions, sessionTf.size);
    for (const [key, counts] of sessionTf) {
      let s = 0;
      for (const [k, f] of counts) s += (idf(sessionDf.get(k)!, sessions) * f * (o.k1 + 1)) / (f + o.k1);
      sessionScore.set(key, s);
    }
  }
  const topSession = Math.max(0, ...sessionScore.values());

  const named = input.namedPeople.length === 1 ? input.namedPeople[0] : undefined;
  const out: Ranked[] = [];
  for (const [id, b] of base) {
    const d = byId.get(id)!;
    let score = b / top;
    if (topSession > 0) score += (o.session * (sessionScore.get(d.sessionKey) ?? 0)) / topSession;
    if (named !== undefined && o.author > 0 && d.authorId === named) score += o.author;
    if (query.dates.length > 0 && o.date > 0) score += o.date * dateMatch(d.createdAt, query.dates);
    out.push({ doc: d, score, matched: (own.get(id) ?? 0) > 0 });
  }
  // Ties go to the newer message: in chat, the later word on a topic is usually the current one.
  return out.sort((a, b) => b.score - a.score || b.doc.id - a.doc.id);
}
