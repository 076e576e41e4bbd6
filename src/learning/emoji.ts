/**
 * What a reaction means. Slack names emoji (`-1`, `thumbsdown`, `white_check_mark`, with
 * `::skin-tone-3` suffixes); Discord sends the character (with skin-tone modifiers and variation
 * selectors). Both are reduced to one canonical form, so a setting written either way matches both.
 */
export type Signal = "negative" | "positive";

/** Slack's names for the characters a setting is likely to hold. */
const ALIASES: Record<string, readonly string[]> = {
  "👎": ["-1", "thumbsdown"],
  "👍": ["+1", "thumbsup"],
  "❌": ["x"],
  "✅": ["white_check_mark"],
  "✔": ["heavy_check_mark"],
  "⭐": ["star"],
  "🌟": ["star2"],
  "🎉": ["tada"],
  "❤": ["heart"],
  "🙏": ["pray"],
  "🚫": ["no_entry_sign"],
  "🙅": ["no_good"],
};

const BY_NAME = new Map<string, string>(Object.entries(ALIASES).flatMap(([char, names]) => names.map((n) => [n, char] as const)));

/** Slack's native feedback buttons under a reply (see the Slack adapter) arrive as these names. */
export const FEEDBACK_BUTTONS: Record<string, Signal> = { feedback_negative: "negative", feedback_positive: "positive" };

/** ":thumbsdown::skin-tone-2:" and "👎🏽" both become "👎"; unknown names stay as they are. */
export function canonicalEmoji(raw: string): string {
  let e = raw.trim().replace(/^:|:$/g, "").replace(/::skin-tone-\d$/, "").replace(/:skin-tone-\d:?$/, "");
  // Skin tones (U+1F3FB..U+1F3FF), variation selectors (U+FE0E, U+FE0F).
  e = e.replace(/[\u{1F3FB}-\u{1F3FF}]/gu, "").replace(/\uFE0E|\uFE0F/g, "");
  return BY_NAME.get(e.toLowerCase()) ?? e;
}

export class EmojiSignals {
  private readonly negative: Set<string>;
  private readonly positive: Set<string>;

  constructor(settings: { correctionEmoji: readonly string[]; positiveEmoji: readonly string[] }) {
    this.negative = new Set(settings.correctionEmoji.map(canonicalEmoji));
    this.positive = new Set(settings.positiveEmoji.map(canonicalEmoji));
  }

  signal(emoji: string): Signal | null {
    const button = FEEDBACK_BUTTONS[emoji];
    if (button) return button;
    const e = canonicalEmoji(emoji);
    if (this.negative.has(e)) return "negative";
    if (this.positive.has(e)) return "positive";
    return null;
  }

  /** ✅: approves a proposed rule, confirms a pending entry. */
  static isApproval(emoji: string): boolean {
    const e = canonicalEmoji(emoji);
    return e === "✅" || e === "✔";
  }
}
