/**
 * Text as cairn keeps it, whatever a platform delivers or a model writes: every message is stored
 * on both databases and every reply can be posted.
 *
 * - A lone UTF-16 surrogate (half an emoji, cut by a client) becomes U+FFFD: platforms refuse or
 *   drop text that is not well formed, and a reply carrying one was never posted.
 * - NUL becomes U+2400 (␀), visibly: PostgreSQL refuses 0x00 in text, and dropping it would change
 *   what the person wrote without a trace.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Any surrogate: nearly every text has none, and this test is far cheaper than the look-arounds. */
const SURROGATE = /[\uD800-\uDFFF]/;

export function storable(text: string): string {
  if (!SURROGATE.test(text) && !text.includes("\u0000")) return text;
  return text.replace(LONE_SURROGATE, "\uFFFD").replaceAll("\u0000", "\u2400");
}

/**
 * `storable` applied to every string in a platform's payload or a model's tool arguments (ids,
 * names, roles, text), through arrays and plain objects; anything else (a Date) is kept as it is.
 * A name or id PostgreSQL refuses would otherwise fail the whole turn, on one database only.
 */
export function storableStrings<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === "string") return storable(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[storable(k)] = clean(v);
  return out;
}

/** Something a person can see: not only whitespace, zero-width or other format characters. */
export function hasVisibleText(text: string): boolean {
  return /[^\s\p{Cf}\p{Cc}\u034F\u115F\u1160\u3164\uFFA0]/u.test(text);
}

/** The default longest message cairn reads whole (about 5,000 tokens); the rest is cut with a note. */
export const DEFAULT_MAX_MESSAGE_CHARS = 20_000;

/** Cuts an over-long message at the limit (never inside a surrogate pair); `cut` is how much was left out. */
export function withinLimit(text: string, limit: number): { text: string; cut: number } {
  if (text.length <= limit) return { text, cut: 0 };
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), cut: text.length - end };
}

export function cutNote(cut: number, limit: number): string {
  return `(Your message was longer than I read at once: I read the first ${limit.toLocaleString("en-US")} characters and left out the last ${cut.toLocaleString("en-US")}. Send the rest in another message if it matters.)`;
}
