/**
 * The canonical form of an emoji at the adapter contract (`FeedbackEvent.emoji`): the Unicode
 * character with skin tones and variation selectors removed, so "👎🏽" and "👎" are one signal and
 * "❤️" (with U+FE0F) is "❤". Adapters reduce what their platform sends to it (Slack's names in
 * src/platforms/slack/emoji.ts); the learning loop only compares these characters.
 */

/** "👎🏽" -> "👎", "❤️" -> "❤"; a custom emoji's name ("shipit") stays as it is. */
export function bareEmoji(emoji: string): string {
  // Skin tones (U+1F3FB..U+1F3FF), variation selectors (U+FE0E, U+FE0F).
  return emoji.trim().replace(/[\u{1F3FB}-\u{1F3FF}]/gu, "").replace(/\uFE0E|\uFE0F/g, "");
}
