/** Splitting mrkdwn under Slack's limit without breaking code fences, entities or links. */
import { describe, expect, it } from "vitest";
import { chunkText } from "../../src/ground/chunk.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";

/** The core's chunker with Slack's limits: no line cap. */
const chunkMrkdwn = (text: string, limit = SLACK_CHUNK_LIMIT): string[] => chunkText(text, { maxChars: limit, maxLines: Infinity });
const fences = (s: string) => s.split("```").length - 1;
/** The text without the fences chunking adds: what a reader sees, joined back. */
const content = (chunks: string[]) => chunks.flatMap((c) => c.split("\n")).filter((l) => l !== "```" && l.trim() !== "");

describe("chunkMrkdwn", () => {
  it("leaves a short text whole and returns nothing for an empty one", () => {
    expect(chunkMrkdwn("hello\n\nworld")).toEqual(["hello\n\nworld"]);
    expect(chunkMrkdwn("  \n ")).toEqual([]);
  });

  it("breaks at blank lines, keeping every chunk under the limit", () => {
    const paras = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"word ".repeat(40)}`.trim());
    const chunks = chunkMrkdwn(paras.join("\n\n"), 1000);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(1000);
      // Whole paragraphs only.
      for (const line of c.split("\n").filter(Boolean)) expect(paras).toContain(line);
    }
    expect(content(chunks)).toEqual(paras);
  });

  it("closes a code fence at a chunk's end and reopens it in the next", () => {
    const code = Array.from({ length: 120 }, (_, i) => `line ${i}: x = f(${i}) &amp;&amp; g()`);
    const text = ["intro", "```", ...code, "```", "outro"].join("\n");
    const chunks = chunkMrkdwn(text, 800);
    expect(chunks.length).toBeGreaterThan(3);
    for (const [i, c] of chunks.entries()) {
      expect(c.length).toBeLessThanOrEqual(800);
      expect(fences(c) % 2).toBe(0);
      if (i > 0 && i < chunks.length - 1) expect(c.startsWith("```\n")).toBe(true);
    }
    expect(content(chunks)).toEqual(["intro", ...code, "outro"]);
  });

  it("holds the limit exactly at the edge of a fence", () => {
    for (let limit = 64; limit < 140; limit++) {
      const text = ["a".repeat(40), "```", ...Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(30, "x")), "```", "b".repeat(40)].join("\n");
      for (const c of chunkMrkdwn(text, limit)) {
        expect(c.length, `limit ${limit}`).toBeLessThanOrEqual(limit);
        expect(fences(c) % 2, `limit ${limit}: ${c}`).toBe(0);
      }
    }
  });

  it("keeps one-line ```code``` spans from toggling the fence state", () => {
    const text = ["```inline```", ...Array.from({ length: 50 }, (_, i) => `row ${i} ${"y".repeat(30)}`)].join("\n");
    for (const c of chunkMrkdwn(text, 300)) expect(fences(c) % 2).toBe(0);
  });

  it("splits a converted long answer into well-formed Slack messages", () => {
    const md = ["# Guide", ...Array.from({ length: 10 }, (_, i) => `Para **${i}** & ${"text ".repeat(100)}`), "```js", ...Array.from({ length: 200 }, (_, i) => `call(${i}) < limit && ok`), "```"].join("\n\n");
    const chunks = chunkMrkdwn(toMrkdwn(md));
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
      expect(fences(c) % 2).toBe(0);
      expect(c).not.toMatch(/&(?![a-z]+;)/);
    }
  });
});

describe("over-long lines", () => {
  it("cut at spaces, and never inside an entity or a <...> sequence", () => {
    expect(chunkMrkdwn(`${"a".repeat(40)} ${"b".repeat(40)}`, 64)).toEqual(["a".repeat(40), "b".repeat(40)]);
    const entity = `${"x".repeat(60)}&amp;yyyy`;
    const parts = chunkMrkdwn(entity, 64);
    for (const part of parts) expect(part).not.toMatch(/&(?!amp;)|&a?m?p?$/);
    expect(parts.join("")).toBe(entity);
    const link = `${"z".repeat(50)}<https://example.com/a|label>`;
    const cut = chunkMrkdwn(link, 64);
    expect(cut[0]).toBe("z".repeat(50));
    expect(cut.join("")).toBe(link);
  });
});
