/**
 * Slack names emoji (`-1`, `thumbsdown`, `white_check_mark`, with `::skin-tone-3` suffixes) where
 * other platforms send the character. The core takes the character (src/ground/emoji.ts), so the
 * adapter reads a reaction's name here; the top reads the emoji settings with it too
 * (CAIRN_CORRECTION_EMOJI may be written with Slack's names), and feedback jobs queued before
 * adapters sent characters.
 */
import { bareEmoji } from "../../ground/emoji.ts";

/** Slack's names for the characters a setting is likely to hold. */
const NAMES: Record<string, readonly string[]> = {
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

const BY_NAME = new Map<string, string>(Object.entries(NAMES).flatMap(([char, names]) => names.map((n) => [n, char] as const)));

/**
 * ":thumbsdown::skin-tone-2:", "-1" and "👎🏽" all become "👎"; a name Slack has no character for
 * here (a custom emoji, "shipit") stays as written, without colons or skin tone.
 */
export function slackEmoji(raw: string): string {
  const name = raw.trim().replace(/^:|:$/g, "").replace(/::skin-tone-\d$/, "").replace(/:skin-tone-\d:?$/, "");
  return bareEmoji(BY_NAME.get(name.toLowerCase()) ?? name);
}
