/**
 * Which lessons a message touches. Lessons (memory entries of kind "lesson": corrections and
 * conventions people taught cairn) are not in every prompt: a channel may hold hundreds, and a
 * prompt carrying all of them buries the one that matters under the ones that do not. Each message
 * is shown the few lessons that share its distinctive words.
 *
 * BM25 over the lessons visible in the place, with a word's rarity measured among those lessons:
 * in a channel whose lessons all mention "deploy", "deploy" alone says little and "staging" says
 * more. A word found in most of several lessons never makes a lesson relevant on its own.
 *
 * Lessons in one channel share words, and a question shares a word or two with several of them, so
 * two more rules keep the lessons a question only brushes against out:
 * - A lesson's score is multiplied by the share of the message it accounts for (the rarity-weighted
 *   share of the message's words found in any lesson that this lesson holds). A lesson matching one
 *   incidental word of a question whose other words match another lesson falls well below that
 *   lesson, while two lessons each matching one equally rare word stay level: words alone cannot
 *   tell those apart, and both are shown.
 * - A lesson adds nothing when a better-scoring lesson already holds every word it shares with the
 *   message ("who's on support?" shows the lesson on the support rotation, not also the one that
 *   mentions the support lead): only the better one is shown.
 *
 * Each lesson's score is also multiplied by its confidence, and a lesson trusted less than
 * MIN_CONFIDENCE is never shown.
 *
 * A short follow-up ("and on staging?") names little of its topic: the person's earlier messages in
 * the session (`context`) count too, each word at CONTEXT_WEIGHT of a word of the message itself, so
 * the thread's topic helps rank and a context word alone never outweighs the message's own.
 */
import { docKeys } from "../history/text.ts";
import { fuseRanks } from "../ground/vector.ts";
import { admittedByMeaning } from "./by-meaning.ts";

export const LESSON_RECALL = {
  /** Lessons shown with one message at most. */
  max: 3,
  /** Lessons scoring below this share of the best one are left out. */
  relative: 0.5,
} as const;

/** Below this a lesson is a guess (a retracted or disputed correction): shown with nothing. */
export const MIN_CONFIDENCE = 0.3;

/** A word only the earlier messages hold counts this much of one the message holds. */
export const CONTEXT_WEIGHT = 0.5;

const K1 = 1.2;
const B = 0.75;

export function relevantLessons<T extends { text: string; confidence?: number; id?: string }>(
  lessons: readonly T[],
  message: string,
  opts: { max: number; relative: number } = LESSON_RECALL,
  context: readonly string[] = [],
  similarity?: ReadonlyMap<string, number>,
): T[] {
  const byWords = lessonsByWords(lessons, message, opts, context);
  if (!similarity || similarity.size === 0) return byWords;
  // Embeddings on: a lesson the message touches by meaning alone (by-meaning.ts) is fused in.
  const trusted = new Map(lessons.filter((l) => l.id !== undefined && (l.confidence ?? 1) >= MIN_CONFIDENCE).map((l) => [l.id!, l]));
  const near = new Map([...similarity].filter(([id]) => trusted.has(id)));
  const own = new Set(docKeys(message));
  const wordless = new Set([...trusted].filter(([, l]) => !docKeys(l.text).some((k) => own.has(k))).map(([id]) => id));
  const byMeaning = admittedByMeaning(near, undefined, wordless).map((id) => trusted.get(id)!);
  if (byMeaning.length === 0) return byWords;
  return fuseRanks([byWords, byMeaning], (l) => l.id ?? l.text).slice(0, opts.max);
}

function lessonsByWords<T extends { text: string; confidence?: number }>(lessons: readonly T[], message: string, opts: { max: number; relative: number }, context: readonly string[]): T[] {
  const own = new Set(docKeys(message));
  // How much each word of the query counts: the message's own words fully, earlier ones less.
  const weight = new Map<string, number>();
  for (const text of context) for (const k of docKeys(text)) weight.set(k, CONTEXT_WEIGHT);
  for (const k of own) weight.set(k, 1);
  const query = new Set(weight.keys());
  // Left out before anything is counted: a lesson never shown does not make others' words rarer.
  const trusted = lessons.filter((entry) => (entry.confidence ?? 1) >= MIN_CONFIDENCE);
  if (own.size === 0 || trusted.length === 0) return [];
  const keyed = trusted.map((entry, i) => ({ entry, i, keys: docKeys(entry.text) }));
  const df = new Map<string, number>();
  for (const l of keyed) for (const k of new Set(l.keys)) if (query.has(k)) df.set(k, (df.get(k) ?? 0) + 1);
  const n = keyed.length;
  const idf = (k: string): number => Math.log(1 + (n - df.get(k)! + 0.5) / (df.get(k)! + 0.5));
  // "Most of several": with three or fewer lessons every shared word still counts.
  const common = (k: string): boolean => n > 3 && df.get(k)! > n / 2;
  // The part of the message any lesson can account for: words no lesson holds are no one's.
  let messageWeight = 0;
  for (const k of df.keys()) messageWeight += idf(k) * weight.get(k)!;
  const avg = keyed.reduce((a, l) => a + l.keys.length, 0) / n || 1;
  const scored: { entry: T; i: number; score: number; words: string[] }[] = [];
  for (const l of keyed) {
    const tf = new Map<string, number>();
    for (const k of l.keys) if (query.has(k)) tf.set(k, (tf.get(k) ?? 0) + 1);
    // The message itself must touch the lesson (context alone never brings one in), and some word
    // that is not in most lessons must say which lesson it is.
    const words = [...tf.keys()];
    if (!words.some((k) => own.has(k)) || !words.some((k) => !common(k))) continue;
    let score = 0;
    let held = 0;
    for (const [k, f] of tf) {
      score += (weight.get(k)! * idf(k) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * l.keys.length) / avg));
      held += idf(k) * weight.get(k)!;
    }
    scored.push({ entry: l.entry, i: l.i, score: score * (held / messageWeight) * (l.entry.confidence ?? 1), words: [...tf.keys()] });
  }
  if (scored.length === 0) return [];
  // Best first; on a tie the later lesson, which is the more recent correction.
  scored.sort((a, b) => b.score - a.score || b.i - a.i);
  const top = scored[0]!.score;
  const accounted = new Set<string>();
  const shown: T[] = [];
  for (const s of scored) {
    if (shown.length >= opts.max || s.score < top * opts.relative) break;
    const adds = s.words.some((k) => !accounted.has(k));
    for (const k of s.words) accounted.add(k);
    if (adds) shown.push(s.entry);
  }
  return shown;
}
