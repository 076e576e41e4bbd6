/**
 * Which lessons a message touches. Lessons (memory entries of kind "lesson": corrections and
 * conventions people taught cairn) are not in every prompt: a channel may hold hundreds, and a
 * prompt carrying all of them buries the one that matters under the ones that do not. Each message
 * is shown the few lessons that share its distinctive words.
 *
 * BM25 over the lessons visible in the place, with a word's rarity measured among those lessons:
 * in a channel whose lessons all mention "deploy", "deploy" alone says little and "staging" says
 * more. A word found in most of several lessons never makes a lesson relevant on its own.
 */
import { docKeys } from "../history/text.ts";

export const LESSON_RECALL = {
  /** Lessons shown with one message at most. */
  max: 3,
  /** Lessons scoring below this share of the best one are left out. */
  relative: 0.5,
} as const;

const K1 = 1.2;
const B = 0.75;

export function relevantLessons<T extends { text: string }>(lessons: readonly T[], message: string, opts: { max: number; relative: number } = LESSON_RECALL): T[] {
  const query = new Set(docKeys(message));
  if (query.size === 0 || lessons.length === 0) return [];
  const keyed = lessons.map((entry, i) => ({ entry, i, keys: docKeys(entry.text) }));
  const df = new Map<string, number>();
  for (const l of keyed) for (const k of new Set(l.keys)) if (query.has(k)) df.set(k, (df.get(k) ?? 0) + 1);
  const n = keyed.length;
  // "Most of several": with three or fewer lessons every shared word still counts.
  const common = (k: string): boolean => n > 3 && (df.get(k) ?? 0) > n / 2;
  const avg = keyed.reduce((a, l) => a + l.keys.length, 0) / n || 1;
  const scored: { entry: T; i: number; score: number }[] = [];
  for (const l of keyed) {
    const tf = new Map<string, number>();
    for (const k of l.keys) if (query.has(k)) tf.set(k, (tf.get(k) ?? 0) + 1);
    if (![...tf.keys()].some((k) => !common(k))) continue;
    let score = 0;
    for (const [k, f] of tf) {
      const d = df.get(k)!;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * l.keys.length) / avg));
    }
    scored.push({ entry: l.entry, i: l.i, score });
  }
  if (scored.length === 0) return [];
  // Best first; on a tie the later lesson, which is the more recent correction.
  scored.sort((a, b) => b.score - a.score || b.i - a.i);
  const top = scored[0]!.score;
  return scored
    .filter((s) => s.score >= top * opts.relative)
    .slice(0, opts.max)
    .map((s) => s.entry);
}
