/**
 * The reference baseline of ../shared/bench/README.md, in memory: plain BM25 over each turn as
 * "date: speaker: text", lowercase word tokens, stop words removed, no stemming, k1 = 1.2, b = 0.75.
 */
import { STOP_WORDS } from "../../src/history/text.ts";

export function plainTokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
}

export class Bm25Index {
  private readonly tfs: Map<string, number>[];
  private readonly lens: number[];
  private readonly df = new Map<string, number>();
  private readonly avg: number;

  constructor(
    docs: readonly string[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.tfs = docs.map((d) => {
      const tf = new Map<string, number>();
      for (const w of plainTokens(d)) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const w of tf.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      return tf;
    });
    this.lens = this.tfs.map((tf) => [...tf.values()].reduce((a, b) => a + b, 0));
    this.avg = this.lens.reduce((a, b) => a + b, 0) / Math.max(1, this.lens.length);
  }

  /** Indexes of the best `k` documents, best first (ties by index). */
  search(query: string, k: number): number[] {
    const terms = [...new Set(plainTokens(query))];
    const n = this.tfs.length;
    const scores = this.tfs.map((tf, i) => {
      let s = 0;
      for (const w of terms) {
        const f = tf.get(w);
        if (!f) continue;
        const df = this.df.get(w)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s += (idf * f * (this.k1 + 1)) / (f + this.k1 * (1 - this.b + (this.b * this.lens[i]!) / this.avg));
      }
      return s;
    });
    return scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, k)
      .map(([, i]) => i);
  }
}
