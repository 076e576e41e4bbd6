/**
 * Slack's native feedback buttons (Block Kit `feedback_buttons` in a `context_actions` block) under
 * the last part of an answer: a 👍/👎 beside reactions that people find without knowing the emoji.
 * A click arrives as a `block_actions` interaction with action_id `cairn_feedback` (feedback-action.ts).
 */
import { REFUSED_CHANNEL_TEXT, REFUSED_USER_TEXT } from "../../admission/access.ts";
import { LIMIT_TEXT } from "../../admission/rate-limit.ts";
import { chunkText } from "../../core/chunk.ts";
import { INTERNAL_ERROR_REPLY, MODEL_INTERRUPTED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../../core/replies.ts";
import type { SlackBlock } from "./client.ts";

export const FEEDBACK_ACTION_ID = "cairn_feedback";
export const FEEDBACK_VALUES = { positive: "positive", negative: "negative" } as const;

/** Slack refuses a section whose text is longer. */
const SECTION_TEXT_LIMIT = 3000;

const BUTTONS: SlackBlock = {
  type: "context_actions",
  elements: [
    {
      type: "feedback_buttons",
      action_id: FEEDBACK_ACTION_ID,
      positive_button: { text: { type: "plain_text", text: "Good answer" }, value: FEEDBACK_VALUES.positive },
      negative_button: { text: { type: "plain_text", text: "Not right" }, value: FEEDBACK_VALUES.negative },
    },
  ],
};

/**
 * The blocks of a message showing the rendered mrkdwn `text` with the buttons under it. A message
 * with blocks shows only its blocks, so the text goes in `section` blocks as mrkdwn, which renders
 * as the message's `text` does (a `markdown` block would read mrkdwn as Markdown: `*bold*` would turn
 * italic, `<url|label>` links would show raw). A part is at most 3,500 characters and a section
 * 3,000: a longer part is split into two sections by the same chunker that splits messages (code
 * fences closed and reopened at the cut), which keeps the buttons on long answers at the cost of a
 * paragraph break where the cut falls.
 */
export function feedbackBlocks(text: string): SlackBlock[] {
  const pieces = text.length <= SECTION_TEXT_LIMIT ? [text] : chunkText(text, { maxChars: SECTION_TEXT_LIMIT, maxLines: Number.POSITIVE_INFINITY });
  return [...pieces.map((piece): SlackBlock => ({ type: "section", text: { type: "mrkdwn", text: piece } })), BUTTONS];
}

const FIXED_NON_ANSWERS = new Set([INTERNAL_ERROR_REPLY, MODEL_UNAVAILABLE_REPLY, MODEL_INTERRUPTED_REPLY, REFUSED_USER_TEXT, REFUSED_CHANNEL_TEXT]);

/**
 * The core's apologies, refusals and rate-limit notes (Markdown, before rendering): nothing there
 * to rate, so they get no buttons. The core may put a note about an over-long message before its
 * reply, separated by a blank line, so the last paragraph is what is compared.
 */
export function isNonAnswer(markdown: string): boolean {
  const text = markdown.trim();
  const last = text.slice(text.lastIndexOf("\n\n") + 1).trim();
  return last === "" || FIXED_NON_ANSWERS.has(last) || LIMIT_TEXT.test(last);
}
