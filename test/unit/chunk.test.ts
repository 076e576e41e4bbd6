import { describe, expect, it } from "vitest";
import { chunkText, fencesBalanced, type ChunkOptions } from "../../src/ground/chunk.ts";

// Discord's limits (2,000 characters, 40 lines a part) as the adapter declares them.
const DISCORD_MESSAGE_LIMIT = 2000;
const DEFAULT_MAX_LINES = 40;
const chunkMessage = (text: string, opts: Partial<ChunkOptions> = {}): string[] => chunkText(text, { maxChars: DISCORD_MESSAGE_LIMIT, maxLines: DEFAULT_MAX_LINES, ...opts });

/**
 * What a text says, for "nothing lost" checks: fence lines (the only lines the chunker adds) and
 * whitespace (cuts may drop it) left out.
 */
function content(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^ {0,3}(`{3,}|~{3,})/.test(line))
    .join("")
    .replace(/\s+/g, "");
}
const rejoin = (parts: string[]) => content(parts.join("\n"));

function expectValid(parts: string[], maxChars = DISCORD_MESSAGE_LIMIT): void {
  for (const p of parts) {
    expect(p.length).toBeLessThanOrEqual(maxChars);
    expect(p.trim()).not.toBe("");
    expect(fencesBalanced(p)).toBe(true);
  }
}

describe("chunkText", () => {
  it("keeps a short reply whole and drops nothing but trailing whitespace", () => {
    expect(chunkMessage("hello **there**\n\n- a\n- b\n\n")).toEqual(["hello **there**\n\n- a\n- b"]);
    expect(chunkMessage("   \n\n ")).toEqual([]);
  });

  it("splits a 5,000-character answer with a code block into three balanced parts, reopening the language", () => {
    const intro = "Here is the script. ".repeat(20).trim();
    const code = Array.from({ length: 40 }, (_, i) => `let v${i} = compute("${"y".repeat(80)}");`).join("\n");
    const text = `${intro}\n\n\`\`\`python\n${code}\n\`\`\`\n\nThat is all.`;
    expect(text.length).toBeGreaterThan(4000);
    const parts = chunkMessage(text);
    expect(parts).toHaveLength(3);
    expectValid(parts);
    expect(parts[1]!.startsWith("```python\n")).toBe(true);
    expect(parts[0]!.endsWith("\n```")).toBe(true);
    expect(rejoin(parts)).toBe(content(text));
  });

  it("prefers a paragraph break to a mid-paragraph cut when the part stays half full", () => {
    const para = (n: number) => `Paragraph ${n}. ${"Lorem ipsum dolor sit amet. ".repeat(10).trim()}`;
    const text = Array.from({ length: 12 }, (_, i) => para(i)).join("\n\n");
    const parts = chunkMessage(text);
    expectValid(parts);
    for (const p of parts) expect(p).toMatch(/^Paragraph \d+\./);
    for (const p of parts) expect(p.endsWith("amet.")).toBe(true);
    expect(rejoin(parts)).toBe(content(text));
  });

  it("cuts before a code block opens rather than inside it when that keeps the block whole", () => {
    const prose = "Some words here. ".repeat(70).trim();
    const code = "```js\nconsole.log(1);\nconsole.log(2);\n```";
    // The prose fits with the opening fence line, but not with the whole block.
    const parts = chunkMessage(`${prose}\n\n${"More words. ".repeat(30).trim()}\n\n${code}`, { maxChars: 1570 });
    expectValid(parts, 1570);
    expect(parts).toHaveLength(2);
    expect(parts.some((p) => p.startsWith("```js\n") && p.includes("console.log(2);\n```"))).toBe(true);
  });

  it("caps the number of lines per part", () => {
    const text = Array.from({ length: 100 }, (_, i) => `- item ${i}`).join("\n");
    const parts = chunkMessage(text);
    expect(parts.map((p) => p.split("\n").length)).toEqual([DEFAULT_MAX_LINES, DEFAULT_MAX_LINES, 100 - 2 * DEFAULT_MAX_LINES]);
    expect(chunkMessage(text, { maxLines: 25 })).toHaveLength(4);
  });

  it("counts reopened and closing fence lines against the line cap and keeps each part balanced", () => {
    const code = Array.from({ length: 90 }, (_, i) => `x${i}`).join("\n");
    const parts = chunkMessage(`\`\`\`\n${code}\n\`\`\``, { maxLines: 20 });
    expectValid(parts);
    for (const p of parts) expect(p.split("\n").length).toBeLessThanOrEqual(20);
    expect(rejoin(parts)).toBe(content(code));
  });

  it("never starts a part with an empty code block when a cut falls on the closing fence", () => {
    const code = Array.from({ length: 37 }, (_, i) => `line ${i}`).join("\n");
    const parts = chunkMessage(`\`\`\`\n${code}\n\`\`\`\nafter`);
    expectValid(parts);
    for (const p of parts) expect(p).not.toMatch(/^```\n```/);
  });

  it("cuts an over-long line at whitespace outside inline spans", () => {
    const words = "word ".repeat(300);
    const text = `${words}\`inline code that must stay together\` ${"tail ".repeat(150)}`.trim();
    const parts = chunkMessage(text, { maxChars: 1600 });
    expectValid(parts, 1600);
    expect(parts.some((p) => p.includes("`inline code that must stay together`"))).toBe(true);
    for (const p of parts) expect((p.match(/`/g) ?? []).length % 2).toBe(0);
    expect(rejoin(parts)).toBe(content(text));
  });

  it("keeps bold, spoiler and link spans whole where it can", () => {
    const span = "**this bold phrase stays whole** ||and this spoiler|| [and this link](https://example.com/x)";
    const text = `${"a ".repeat(790)}${span} ${"b ".repeat(400)}`.trim();
    const parts = chunkMessage(text);
    expectValid(parts);
    expect(parts.some((p) => p.includes("**this bold phrase stays whole**"))).toBe(true);
    expect(parts.some((p) => p.includes("||and this spoiler||"))).toBe(true);
    expect(parts.some((p) => p.includes("[and this link](https://example.com/x)"))).toBe(true);
  });

  it("hard-cuts a line with no whitespace, and never between the halves of an emoji", () => {
    const text = "🙂".repeat(1500);
    const parts = chunkMessage(text);
    expectValid(parts);
    expect(parts.join("")).toBe(text);
    for (const p of parts) expect(p).not.toMatch(/[\ud800-\udbff]$/);
  });

  it("cuts an over-long code line inside a fence and keeps both halves fenced", () => {
    const text = `\`\`\`\n${"z".repeat(4500)}\n\`\`\``;
    const parts = chunkMessage(text);
    expect(parts.length).toBe(3);
    expectValid(parts);
    expect(parts.map((p) => p.replace(/\n?```\n?/g, "")).join("")).toBe("z".repeat(4500));
  });

  it("closes a fence the model forgot to close", () => {
    const parts = chunkMessage("look:\n```ts\nconst a = 1;");
    expect(parts).toEqual(["look:\n```ts\nconst a = 1;\n```"]);
  });

  it("handles tildes, longer fences and fences nested in longer ones", () => {
    const inner = "````md\n```js\ninner();\n```\n````";
    expect(fencesBalanced(inner)).toBe(true);
    const text = `${inner}\n${"filler line\n".repeat(60)}~~~\n${"tilde\n".repeat(50)}~~~`;
    const parts = chunkMessage(text);
    expectValid(parts);
    expect(parts.some((p) => p.startsWith("~~~"))).toBe(true);
    expect(rejoin(parts)).toBe(content(text));
  });

  it("normalizes CRLF and refuses limits it cannot honour", () => {
    expect(chunkMessage("a\r\nb")).toEqual(["a\nb"]);
    expect(() => chunkMessage("x", { maxChars: 10 })).toThrow(/maxChars/);
    expect(() => chunkMessage("x", { maxLines: 2 })).toThrow(/maxLines/);
  });

  it("holds its invariants on random markdown", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ["```ts", "```", "~~~", "", "- item", "## Heading", "**bold** text", "`code`", "plain words ".repeat(20), "x".repeat(300), "||secret||"];
    for (let round = 0; round < 200; round++) {
      const lines = Array.from({ length: 20 + rand(200) }, () => pieces[rand(pieces.length)]!);
      const text = lines.join("\n");
      const maxChars = 200 + rand(1800);
      const parts = chunkMessage(text, { maxChars, maxLines: 5 + rand(40) });
      expectValid(parts, maxChars);
      expect(rejoin(parts)).toBe(content(text));
    }
  });
});
