/**
 * Slack's native feedback buttons (Block Kit `feedback_buttons` in a `context_actions` block) under
 * the last part of an answer: a 👍/👎 beside reactions that people find without knowing the emoji.
 * A click arrives as a `block_actions` interaction with action_id `cairn_feedback` (action.ts).
 */
import { chunkText } from "../../../ground/chunk.ts";
import type { SlackBlock } from "../client.ts";

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
