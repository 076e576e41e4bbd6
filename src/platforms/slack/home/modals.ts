/**
 * The small modals the Home tab opens (pure builders; actions.ts opens them with the click's
 * trigger_id):
 * - an answer: a command's reply shown to the clicker alone, when a click was refused or found
 *   nothing (a Home tab has no ephemeral messages), and after the last step of a two-step button;
 * - a next step: a command's answer with a submit button that runs the button's `next` command
 *   (Forget me -> Erase everything), the explicit second step the command asks for;
 * - an input: a text field whose submission runs the command with the text as its last argument
 *   (Edit persona).
 * The two that submit carry the command line to run and the Home state in private_metadata, so the
 * submission needs nothing from this process (it may reach another replica).
 */
import type { types } from "@slack/bolt";
import type { ViewButton } from "../../../ground/view-model.ts";
import { chunkText } from "../../../ground/chunk.ts";
import { toMrkdwn } from "../mrkdwn.ts";
import { commandLine, HOME_LIMITS, plain, section } from "./blocks.ts";
import { encodeModal, type HomeState } from "./state.ts";

/** Slack's limits for modals beyond those of blocks. */
export const MODAL_LIMITS = { title: 24, button: 24, callbackId: 255, inputLabel: 2000, inputMaxLength: 3000, blocks: 100 } as const;

/** The callback_ids of the Home's modals that submit: the adapter routes their view_submission here. */
export const HOME_CALLBACKS = { next: "cairn_home_next", input: "cairn_home_input" } as const;
export const HOME_CALLBACK_ID = /^cairn_home_(next|input)$/;
/** Where the input modal's text is found in `view.state.values`. */
export const INPUT_BLOCK_ID = "cairn_text";
export const INPUT_ACTION_ID = "text";

/** A command's answer for the clicker alone. */
export function answerModal(title: string, markdown: string): types.ModalView {
  return { type: "modal", title: plain(title, MODAL_LIMITS.title), close: plain("Close", MODAL_LIMITS.button), blocks: answerBlocks(markdown) };
}

/** The answer of a button's first command, with the button's next step as the modal's submit. */
export function nextModal(title: string, markdown: string, next: ViewButton, state: HomeState): types.ModalView {
  return {
    type: "modal",
    callback_id: HOME_CALLBACKS.next,
    title: plain(title, MODAL_LIMITS.title),
    submit: plain(next.label, MODAL_LIMITS.button),
    close: plain("Cancel", MODAL_LIMITS.button),
    blocks: answerBlocks(markdown),
    private_metadata: encodeModal(commandLine(next), state),
  };
}

/** A text field for a button whose command takes typed text (`ViewButton.input`). */
export function inputModal(b: ViewButton & { input: NonNullable<ViewButton["input"]> }, state: HomeState): types.ModalView {
  const maxLength = Math.max(1, Math.min(b.input.maxLength, MODAL_LIMITS.inputMaxLength));
  const initial = b.input.initial.slice(0, maxLength);
  return {
    type: "modal",
    callback_id: HOME_CALLBACKS.input,
    title: plain(b.input.title, MODAL_LIMITS.title),
    submit: plain("Save", MODAL_LIMITS.button),
    close: plain("Cancel", MODAL_LIMITS.button),
    blocks: [
      {
        type: "input",
        block_id: INPUT_BLOCK_ID,
        label: plain(b.input.label, MODAL_LIMITS.inputLabel),
        element: { type: "plain_text_input", action_id: INPUT_ACTION_ID, multiline: b.input.multiline, max_length: maxLength, ...(initial ? { initial_value: initial } : {}) },
      },
    ],
    private_metadata: encodeModal(commandLine(b), state),
  };
}

/** The answer as sections of at most 3,000 characters, cut between paragraphs. */
function answerBlocks(markdown: string): types.KnownBlock[] {
  const text = toMrkdwn(markdown);
  const pieces = text.length <= HOME_LIMITS.sectionText ? [text] : chunkText(text, { maxChars: HOME_LIMITS.sectionText, maxLines: Number.POSITIVE_INFINITY });
  return (pieces.length ? pieces : [" "]).slice(0, MODAL_LIMITS.blocks).map((p) => section(p));
}
