/**
 * Vectors as cairn keeps them: each component of the unit vector times 127, rounded to an int8.
 * A quarter of float32's size, and cosine similarity on them stays within about 1% of the float's
 * (rank order among close neighbours can swap; recall is fused with words anyway). The same coding
 * is used for stored vectors and for the query's, so the databases compare like with like.
 */

/** A vector space: vectors from one model at one length; another model's vectors are never compared. */
export interface VectorSpace {
  model: string;
  dimensions: number;
}

/** How a space is named in the database ("<model>@<dimensions>"). */
export const spaceKey = (s: VectorSpace): string => `${s.model}@${s.dimensions}`;

/** The int8 coding of `v` (normalised first; the zero vector stays zero). */
export function quantize(v: Float32Array | readonly number[]): Uint8Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  const out = new Int8Array(v.length);
  if (norm > 0) for (let i = 0; i < v.length; i++) out[i] = Math.max(-127, Math.min(127, Math.round((v[i]! / norm) * 127)));
  return new Uint8Array(out.buffer);
}

/** Cosine similarity of two int8 codings of one length (0 when either is zero or empty). */
export function cosine(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  if (n === 0 || a.length !== b.length) return 0;
  const x = new Int8Array(a.buffer, a.byteOffset, n);
  const y = new Int8Array(b.buffer, b.byteOffset, n);
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < n; i++) {
    dot += x[i]! * y[i]!;
    nx += x[i]! * x[i]!;
    ny += y[i]! * y[i]!;
  }
  return nx === 0 || ny === 0 ? 0 : dot / Math.sqrt(nx * ny);
}

/**
 * Reciprocal rank fusion: each list adds 1 / (k + rank) to the items it holds (rank from 1), so an
 * item high in either list, or fairly high in both, comes first; no score of one list is compared
 * with the other's. k = 60, as in Cormack et al. Ties keep the first list's order.
 */
export function fuseRanks<T>(lists: readonly (readonly T[])[], key: (item: T) => string | number, k = 60): T[] {
  const score = new Map<string | number, { item: T; score: number; first: number }>();
  let order = 0;
  for (const list of lists) {
    list.forEach((item, i) => {
      const id = key(item);
      const s = score.get(id);
      if (s) s.score += 1 / (k + i + 1);
      else score.set(id, { item, score: 1 / (k + i + 1), first: order++ });
    });
  }
  return [...score.values()].sort((a, b) => b.score - a.score || a.first - b.first).map((s) => s.item);
}
