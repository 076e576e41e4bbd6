/**
 * The core's rich posts (src/core/adapter.ts `RichPost`, a report) as one Discord message of
 * embeds: the title as the embed's title, the opening sections without a heading as its
 * description, every other section as fields (a heading names its first field; a section longer
 * than a field's value goes on in unnamed fields), the footer under the last embed. A message
 * takes up to ten embeds of 25 fields each, and 6,000 characters across all of them: a post that
 * needs more is not cut but refused (null), and the core posts its Markdown as text parts.
 *
 * Markdown is Discord's own format (the adapter renders it as it is), so section text goes in as
 * written. Mentions in embeds never notify; the message is sent with `parse: []` all the same.
 */
import type { APIEmbed, APIEmbedField } from "discord.js";
import type { RichPost } from "../../ground/adapter.ts";
import { chunkText } from "../../ground/chunk.ts";
import { withinLimit } from "../../ground/text.ts";

/** What Discord refuses beyond (400 Invalid Form Body). */
export const EMBED_LIMITS = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  /** Title, description, field names and values, footers: across every embed of the message. */
  total: 6000,
  embeds: 10,
} as const;

/** A field's name cannot be empty: a continuation's is a zero-width space. */
const UNNAMED = "\u200b";

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${withinLimit(text, max - 1).text.trimEnd()}…`;
}

/** The post as embeds of one message, or null when it does not fit one message's limits. */
export function richEmbeds(post: RichPost): APIEmbed[] | null {
  const descriptions: string[] = [];
  const fields: APIEmbedField[] = [];
  for (const section of post.sections) {
    const text = section.markdown.trim();
    const heading = section.heading?.trim();
    if (!text && !heading) continue;
    // The opening, before any named section, reads as the embed's body.
    if (!heading && fields.length === 0 && [...descriptions, text].join("\n\n").length <= EMBED_LIMITS.description) {
      descriptions.push(text);
      continue;
    }
    const values = text ? chunkText(text, { maxChars: EMBED_LIMITS.fieldValue, maxLines: Number.POSITIVE_INFINITY }) : [UNNAMED];
    values.forEach((value, i) => fields.push({ name: i === 0 && heading ? clip(heading, EMBED_LIMITS.fieldName) : UNNAMED, value }));
  }

  const groups = Math.max(1, Math.ceil(fields.length / EMBED_LIMITS.fields));
  const embeds = Array.from({ length: groups }, (_, k): APIEmbed => {
    const some = fields.slice(k * EMBED_LIMITS.fields, (k + 1) * EMBED_LIMITS.fields);
    return some.length ? { fields: some } : {};
  });
  const first = embeds[0]!;
  const title = post.title.trim();
  if (title) first.title = clip(title, EMBED_LIMITS.title);
  if (descriptions.length) first.description = descriptions.join("\n\n");
  const footer = post.footer?.trim();
  if (footer) embeds.at(-1)!.footer = { text: clip(footer, EMBED_LIMITS.footer) };

  if (embeds.length > EMBED_LIMITS.embeds || embedChars(embeds) > EMBED_LIMITS.total) return null;
  // An embed with nothing in it is refused too.
  return embeds.every((e) => e.title || e.description || e.fields?.length || e.footer) ? embeds : null;
}

/** The characters Discord counts against a message's 6,000. */
export function embedChars(embeds: readonly APIEmbed[]): number {
  let n = 0;
  for (const e of embeds) {
    n += (e.title ?? "").length + (e.description ?? "").length + (e.footer?.text ?? "").length + (e.author?.name ?? "").length;
    for (const f of e.fields ?? []) n += f.name.length + f.value.length;
  }
  return n;
}
