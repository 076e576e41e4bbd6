/**
 * The builders of the core's rich posts on their own: Slack Block Kit (header, mrkdwn sections split
 * at 3,000 characters, dividers, context, the 50-block cap, a clipped fallback text, inert mass
 * mentions) and Discord embeds (title, description, fields within 1,024, 25 fields per embed, ten
 * embeds and 6,000 characters per message, or null).
 */
import { describe, expect, it } from "vitest";
import type { RichPost } from "../../src/ground/adapter.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import type { SlackBlock } from "../../src/platforms/slack/client.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { fallbackText, richBlocks, richMessage, SLACK_BLOCK_LIMITS } from "../../src/platforms/slack/replies/rich.ts";
import { EMBED_LIMITS, embedChars, richEmbeds } from "../../src/platforms/discord/rich.ts";

const sections = (n: number, body = (i: number) => `- item ${i}`) => Array.from({ length: n }, (_, i) => ({ heading: `Part ${i}`, markdown: body(i) }));
const types = (blocks: readonly SlackBlock[]) => blocks.map((b) => b.type);
const textOf = (b: SlackBlock): string => ("text" in b && b.text && typeof b.text === "object" && "text" in b.text ? b.text.text : "");

describe("Slack blocks", () => {
  it("shows the title as a header, each section as mrkdwn with dividers between, the footer as context", () => {
    const post: RichPost = { title: "Weekly review", sections: [{ markdown: "A **good** week." }, { heading: "Numbers", markdown: "- Replies: **3**" }], footer: "From the records" };
    expect(richBlocks(post)).toEqual([
      { type: "header", text: { type: "plain_text", text: "Weekly review", emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: "A *good* week." } },
      { type: "divider" },
      { type: "section", text: { type: "mrkdwn", text: "*Numbers*\n• Replies: *3*" } },
      { type: "context", elements: [{ type: "plain_text", text: "From the records", emoji: true }] },
    ]);
  });

  it("clips a long title to a header's 150 characters and skips empty sections", () => {
    const blocks = richBlocks({ title: "t".repeat(400), sections: [{ markdown: "  " }, { markdown: "body" }, { heading: " ", markdown: "" }] })!;
    expect(types(blocks)).toEqual(["header", "section"]);
    const header = textOf(blocks[0]!);
    expect(header).toHaveLength(SLACK_BLOCK_LIMITS.headerText);
    expect(header.endsWith("…")).toBe(true);
  });

  it("splits a section longer than 3,000 characters into section blocks, without a divider inside it", () => {
    const lines = Array.from({ length: 90 }, (_, i) => `- line ${i}: ${"word ".repeat(16)}`);
    const blocks = richBlocks({ title: "T", sections: [{ heading: "Long", markdown: lines.join("\n") }, { markdown: "after" }] })!;
    const pieces = blocks.slice(1, blocks.findIndex((b) => b.type === "divider"));
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.every((b) => b.type === "section" && textOf(b).length <= SLACK_BLOCK_LIMITS.sectionText)).toBe(true);
    expect(textOf(pieces[0]!).startsWith("*Long*\n")).toBe(true);
    // Nothing lost: every line is in one piece.
    const joined = pieces.map(textOf).join("\n");
    for (let i = 0; i < 90; i++) expect(joined).toContain(`• line ${i}: `);
    expect(types(blocks).slice(-2)).toEqual(["divider", "section"]);
  });

  it("holds at most 50 blocks: one section more and there is no block form", () => {
    // Header, n sections, n − 1 dividers, context: 2n + 1.
    expect(richBlocks({ title: "T", sections: sections(24), footer: "f" })).toHaveLength(49);
    expect(richBlocks({ title: "T", sections: sections(25), footer: "f" })).toBeNull();
    expect(richBlocks({ title: "T", sections: sections(25) })).toHaveLength(50);
    expect(richMessage({ title: "T", sections: sections(26) }, "text")).toBeNull();
  });

  it("keeps mass mentions inert in sections and headings, as in text; title and footer are plain text", () => {
    const blocks = richBlocks({ title: "<!channel> news", sections: [{ heading: "<!here> *now*", markdown: "<!everyone> and <!subteam^S1|team>, but <@U1>" }], footer: "<!here>" })!;
    expect(blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: "<!channel> news", emoji: true } });
    expect(textOf(blocks[1]!)).toBe("*&lt;!here&gt; now*\n&lt;!everyone&gt; and &lt;!subteam^S1|team&gt;, but <@U1>");
    expect(blocks[2]).toEqual({ type: "context", elements: [{ type: "plain_text", text: "<!here>", emoji: true }] });
  });

  it("carries the Markdown as mrkdwn for the fallback text, clipped to a message's size", () => {
    expect(richMessage({ title: "T", sections: [{ markdown: "x" }] }, "**Hi** <!here>")?.text).toBe("*Hi* &lt;!here&gt;");
    const long = Array.from({ length: 200 }, (_, i) => `- point ${i} of the week`).join("\n");
    const text = fallbackText(long);
    expect(text.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
    expect(text.endsWith("\n…")).toBe(true);
    expect(toMrkdwn(long).startsWith(text.slice(0, -2))).toBe(true);
  });
});

describe("Discord embeds", () => {
  it("shows the title, the opening as the description, named sections as fields, the footer", () => {
    const post: RichPost = { title: "Weekly review", sections: [{ markdown: "A **good** week." }, { heading: "Numbers", markdown: "- Replies: **3**" }], footer: "From the records" };
    expect(richEmbeds(post)).toEqual([
      { title: "Weekly review", description: "A **good** week.", fields: [{ name: "Numbers", value: "- Replies: **3**" }], footer: { text: "From the records" } },
    ]);
  });

  it("clips the title to 256 characters and a heading to a field name's 256", () => {
    const [embed] = richEmbeds({ title: "t".repeat(300), sections: [{ heading: "h".repeat(300), markdown: "v" }] })!;
    expect(embed!.title).toHaveLength(EMBED_LIMITS.title);
    expect(embed!.fields![0]!.name).toHaveLength(EMBED_LIMITS.fieldName);
  });

  it("continues a section longer than a field's 1,024 characters in unnamed fields", () => {
    const body = Array.from({ length: 40 }, (_, i) => `- line ${i}: ${"word ".repeat(10).trim()}`).join("\n");
    const [embed] = richEmbeds({ title: "T", sections: [{ heading: "Long", markdown: body }] })!;
    const fields = embed!.fields!;
    expect(fields.length).toBeGreaterThan(1);
    expect(fields.every((f) => f.value.length <= EMBED_LIMITS.fieldValue)).toBe(true);
    expect(fields.map((f) => f.name)).toEqual(["Long", ...fields.slice(1).map(() => "\u200b")]);
    expect(fields.map((f) => f.value).join("\n")).toBe(body);
  });

  it("puts fields beyond 25 in a further embed, the footer under the last", () => {
    const embeds = richEmbeds({ title: "T", sections: sections(30), footer: "f" })!;
    expect(embeds.map((e) => e.fields?.length)).toEqual([25, 5]);
    expect([embeds[0]!.title, embeds[1]!.title]).toEqual(["T", undefined]);
    expect([embeds[0]!.footer, embeds[1]!.footer]).toEqual([undefined, { text: "f" }]);
  });

  it("refuses a post over 6,000 characters or ten embeds (null), and takes one at exactly 6,000", () => {
    // Title 32 + footer 938 + five fields of a name "Part i" (6) and a value of 1,000: 6,000.
    const atLimit = richEmbeds({ title: "T".repeat(32), sections: sections(5, () => "v".repeat(1000)), footer: "f".repeat(938) });
    expect(atLimit && embedChars(atLimit)).toBe(6000);
    expect(richEmbeds({ title: "T".repeat(33), sections: sections(5, () => "v".repeat(1000)), footer: "f".repeat(938) })).toBeNull();
    // 251 small fields: eleven embeds.
    expect(richEmbeds({ title: "T", sections: Array.from({ length: 251 }, () => ({ heading: "h", markdown: "v" })) })).toBeNull();
    expect(richEmbeds({ title: "T", sections: Array.from({ length: 250 }, () => ({ heading: "h", markdown: "v" })) })).toHaveLength(10);
  });

  it("sends a heading-less section after named ones as an unnamed field, and nothing at all as null", () => {
    const [embed] = richEmbeds({ title: "", sections: [{ heading: "A", markdown: "a" }, { markdown: "later" }] })!;
    expect(embed).toEqual({ fields: [{ name: "A", value: "a" }, { name: "\u200b", value: "later" }] });
    expect(richEmbeds({ title: " ", sections: [{ markdown: " " }] })).toBeNull();
  });
});
