/**
 * Lessons a message touches by meaning alone, when embeddings are on: a lesson that shares no
 * word with the message ("how do we ship the web app?" and a lesson on deploying the frontend) but
 * whose vector is far nearer the message's than the place's other lessons are. A lesson sharing a
 * word with the message is for the word rules (recall.ts) to judge: a shared word raises similarity
 * under any model, and an unrelated question sharing one ("lost my house keys" and a lesson on API
 * keys) would stand out by it. (Figures with and without: bench/README.md, semantic recall.)
 *
 * "Far nearer" is measured against the other lessons, not as a fixed similarity: models differ in
 * what similarity unrelated texts have (0.1 for some, 0.5 for others), while a lesson that stands out
 * from its neighbours by several standard deviations stands out under any of them. Below
 * MEANING.minOthers other lessons there is no spread to stand out from, and nothing is admitted by
 * meaning. At most MEANING.max lessons come this way: words stay the main path, and a lesson shown
 * where it does not apply costs more than one missed.
 */
export const MEANING = {
  /** Other lessons (with vectors) a candidate is measured against. */
  minOthers: 4,
  /** How far above the others' mean, in their standard deviations. */
  z: 3,
  /**
   * And never below this similarity, whatever the spread: texts that merely share a few common words
   * reach 0.3 under a poor model (the fake's hashed words) and stand out among unrelated lessons;
   * a paraphrase sits above 0.5 under the usual hosted models, and for models whose unrelated texts
   * already score higher the spread decides.
   */
  floor: 0.5,
  /** Lessons admitted by meaning alone with one message. */
  max: 1,
} as const;

/**
 * Ids of lessons admitted by meaning alone (best first), of `similarity` (lesson id -> cosine with
 * the message), among `eligible` (all when unset). Every lesson's similarity counts in the spread.
 */
export function admittedByMeaning(
  similarity: ReadonlyMap<string, number>,
  opts: { minOthers: number; z: number; floor: number; max: number } = MEANING,
  eligible?: ReadonlySet<string>,
): string[] {
  const entries = [...similarity];
  if (entries.length - 1 < opts.minOthers) return [];
  const total = entries.reduce((a, [, s]) => a + s, 0);
  const squares = entries.reduce((a, [, s]) => a + s * s, 0);
  const out: { id: string; z: number }[] = [];
  for (const [id, s] of entries) {
    if (s < opts.floor || (eligible && !eligible.has(id))) continue;
    // The others alone (leave one out): the candidate's own similarity must not widen the spread it is measured by.
    const n = entries.length - 1;
    const mean = (total - s) / n;
    const sd = Math.sqrt(Math.max(0, (squares - s * s) / n - mean * mean));
    const z = sd > 0 ? (s - mean) / sd : s > mean ? Infinity : 0;
    if (z >= opts.z) out.push({ id, z });
  }
  return out.sort((a, b) => b.z - a.z).slice(0, opts.max).map((c) => c.id);
}
