/**
 * The core's rich posts (src/core/adapter.ts `RichPost`, a report) as one Slack message in Block
 * Kit: the title as a `header`, each section as `section` blocks of mrkdwn with `divider`s between
 * sections, a section's buttons as `actions` under it (post-buttons.ts: a click runs the button's
 * command as the clicker), the footer as a `context` block. The message's `text` is the post's Markdown rendered
 * as mrkdwn, which Slack shows in notifications and in clients without Block Kit.
 *
 * Mass mentions stay inert as in any text of cairn's: section text goes through the same
 * `toMrkdwn` as messages (which escapes `<!channel>` and the like), and the title, headings and
 * footer are `plain_text` or escaped, where Slack parses no mention at all.
 */
import type { RichPost } from "../../../ground/adapter.ts";
import { chunkText } from "../../../ground/chunk.ts";
import { withinLimit } from "../../../ground/text.ts";
import { SLACK_CHUNK_LIMIT } from "./chunk.ts";
import type { SlackBlock } from "../client.ts";
import { escapeText, toMrkdwn } from "../mrkdwn.ts";
import { postButtonBlocks } from "./post-buttons.ts";

/** What Slack refuses beyond (chat.postMessage answers invalid_blocks). */
export const SLACK_BLOCK_LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  /** A context element's text: a text object's limit. */
  contextText: 3000,
} as const;

export interface SlackRichMessage {
  /** The fallback: notifications, clients without Block Kit, and screen readers' summary. */
  text: string;
  blocks: SlackBlock[];
}

/** Cut to `max` characters with an ellipsis (never inside a surrogate pair). */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${withinLimit(text, max - 1).text.trimEnd()}…`;
}

/**
 * The post as blocks with its fallback text, or null when it needs more blocks than a message
 * takes (the core then posts the Markdown as text parts).
 */
export function richMessage(post: RichPost, fallbackMarkdown: string): SlackRichMessage | null {
  const blocks = richBlocks(post);
  return blocks ? { text: fallbackText(fallbackMarkdown), blocks } : null;
}

export function richBlocks(post: RichPost): SlackBlock[] | null {
  const blocks: SlackBlock[] = [];
  const title = post.title.trim();
  if (title) blocks.push({ type: "header", text: { type: "plain_text", text: clip(title, SLACK_BLOCK_LIMITS.headerText), emoji: true } });
  let first = true;
  let counter = 0;
  for (const section of post.sections) {
    const pieces = sectionPieces(section.heading, section.markdown);
    if (pieces.length === 0) continue;
    if (!first) blocks.push({ type: "divider" });
    first = false;
    for (const text of pieces) blocks.push({ type: "section", text: { type: "mrkdwn", text } });
    // A section's buttons (post-buttons.ts): each runs its command line as the person who clicks.
    blocks.push(...postButtonBlocks(section.buttons ?? [], () => counter++));
  }
  const footer = post.footer?.trim();
  if (footer) blocks.push({ type: "context", elements: [{ type: "plain_text", text: clip(footer, SLACK_BLOCK_LIMITS.contextText), emoji: true }] });
  return blocks.length <= SLACK_BLOCK_LIMITS.blocks ? blocks : null;
}

/**
 * One section's mrkdwn, the heading in bold on its first line, in pieces a section block takes: a
 * longer one is cut by the chunker that splits messages (code fences closed and reopened, no entity
 * or link broken), at the cost of a paragraph break where the cut falls.
 */
function sectionPieces(heading: string | undefined, markdown: string): string[] {
  // A heading is plain text: `*` would end the bold early, and `&<>` are Slack's control characters.
  const bold = heading?.trim() ? `*${escapeText(heading.trim().replace(/\*/g, ""))}*` : "";
  const text = [bold, toMrkdwn(markdown)].filter(Boolean).join("\n");
  if (!text.trim()) return [];
  return text.length <= SLACK_BLOCK_LIMITS.sectionText ? [text] : chunkText(text, { maxChars: SLACK_BLOCK_LIMITS.sectionText, maxLines: Number.POSITIVE_INFINITY });
}

/**
 * The Markdown as mrkdwn, as a text message would show it, cut at a message's size: the blocks
 * carry the whole post, and Slack advises under 4,000 characters of `text`.
 */
export function fallbackText(markdown: string): string {
  const text = toMrkdwn(markdown) || "…";
  if (text.length <= SLACK_CHUNK_LIMIT) return text;
  const [head = ""] = chunkText(text, { maxChars: SLACK_CHUNK_LIMIT - 2, maxLines: Number.POSITIVE_INFINITY });
  return `${head}\n…`;
}
