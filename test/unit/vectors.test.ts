/**
 * The vector pieces that need no server: the int8 coding, cosine on it, reciprocal rank fusion, and
 * which lessons a message touches by meaning alone.
 */
import { describe, expect, it } from "vitest";
import { cosine, fuseRanks, quantize, spaceKey } from "../../src/ground/vector.ts";
import { admittedByMeaning } from "../../src/lessons/by-meaning.ts";
import { relevantLessons } from "../../src/lessons/recall.ts";

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
}
const randomVector = (rand: () => number, n: number) => Array.from({ length: n }, rand);
const floatCosine = (a: number[], b: number[]) => {
  let d = 0;
  let x = 0;
  let y = 0;
  a.forEach((v, i) => ((d += v * b[i]!), (x += v * v), (y += b[i]! * b[i]!)));
  return d / Math.sqrt(x * y);
};

describe("int8 vectors", () => {
  it("keep cosine similarity within 0.02 of the float vectors', over many random pairs", () => {
    const rand = seeded(42);
    let worst = 0;
    for (let i = 0; i < 500; i++) {
      const a = randomVector(rand, 256);
      // Pairs from unrelated to near: b mixes a with noise.
      const mix = rand() * 0.5 + 0.5;
      const b = a.map((v) => v * mix + rand() * (1 - mix));
      worst = Math.max(worst, Math.abs(cosine(quantize(a), quantize(b)) - floatCosine(a, b)));
    }
    expect(worst).toBeLessThan(0.02);
  });

  it("are a byte a dimension, unit length times 127; the zero vector and vectors of other lengths compare as 0", () => {
    const q = quantize([3, 4]);
    expect([...new Int8Array(q.buffer)]).toEqual([76, 102]);
    expect(q.byteLength).toBe(2);
    expect(cosine(quantize([0, 0]), quantize([1, 0]))).toBe(0);
    expect(cosine(quantize([1, 0, 0]), quantize([1, 0]))).toBe(0);
    expect(cosine(quantize([1, 2]), quantize([2, 4]))).toBeCloseTo(1, 3);
    expect(spaceKey({ model: "m", dimensions: 256 })).toBe("m@256");
  });
});

describe("reciprocal rank fusion", () => {
  it("puts an item high in both lists first, and interleaves the rest by rank", () => {
    const fused = fuseRanks([["a", "b", "c"], ["d", "b", "e"]], (x) => x);
    expect(fused[0]).toBe("b");
    expect(fused.slice(1, 3).sort()).toEqual(["a", "d"]);
    expect(fused).toHaveLength(5);
  });
  it("keeps the first list's order on ties", () => {
    expect(fuseRanks([["a"], ["d"]], (x) => x)).toEqual(["a", "d"]);
  });
});

describe("lessons by meaning", () => {
  const others = (n: number, around: number) => Array.from({ length: n }, (_, i) => [`o${i}`, around + (i % 3) * 0.02] as [string, number]);
  it("admits a lesson that stands out from the place's others, whatever their baseline", () => {
    // A model whose unrelated texts sit near 0.1, and one whose sit near 0.5: the same outlier rule.
    expect(admittedByMeaning(new Map([...others(6, 0.1), ["near", 0.55]]))).toEqual(["near"]);
    expect(admittedByMeaning(new Map([...others(6, 0.5), ["near", 0.8]]))).toEqual(["near"]);
  });
  it("admits nothing when no lesson stands out, below the floor, or with too few lessons to measure a spread", () => {
    expect(admittedByMeaning(new Map(others(8, 0.3)))).toEqual([]);
    // Standing out, but only as near as texts sharing a few common words are under a poor model.
    expect(admittedByMeaning(new Map([...others(6, 0.01), ["near", 0.35]]))).toEqual([]);
    expect(admittedByMeaning(new Map([...others(2, 0.1), ["near", 0.9]]))).toEqual([]);
  });
  it("adds a lesson sharing no word with the message beside those found by words, within the limit", () => {
    const lessons = [
      { id: "deploy", text: "Releases of the frontend go out with zebractl, never by hand." },
      { id: "billing", text: "The billing service is owned by the payments team." },
      ...Array.from({ length: 5 }, (_, i) => ({ id: `x${i}`, text: `Unrelated convention number ${i} about lunch orders.` })),
    ];
    const asked = "who owns billing, and how do we ship the web app?";
    expect(relevantLessons(lessons, asked).map((l) => l.id)).toEqual(["billing"]);
    const similarity = new Map([...lessons.map((l) => [l.id, 0.1] as [string, number]), ["deploy", 0.6]]);
    expect(relevantLessons(lessons, asked, undefined, [], similarity).map((l) => l.id).sort()).toEqual(["billing", "deploy"]);
    // A lesson trusted too little is not admitted by meaning either.
    const doubted = lessons.map((l) => (l.id === "deploy" ? { ...l, confidence: 0.1 } : l));
    expect(relevantLessons(doubted, asked, undefined, [], similarity).map((l) => l.id)).toEqual(["billing"]);
    // A lesson sharing a word with the message is the word rules' to judge, however near its vector.
    const sharing = lessons.map((l) => (l.id === "x0" ? { ...l, text: "Unrelated lunch convention for the web team." } : l));
    const nearX0 = new Map([...lessons.map((l) => [l.id, 0.1] as [string, number]), ["x0", 0.6]]);
    expect(relevantLessons(sharing, asked, undefined, [], nearX0).map((l) => l.id)).toEqual(["billing"]);
  });
});
