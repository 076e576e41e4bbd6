/**
 * `/correct <text>` and `/good`: feedback on cairn's last answer in this conversation, typed. The
 * console has no reactions, so these are its 👎 and 👍; they work on every platform. The learning
 * side (what is recorded, which job runs) is learning/command-feedback.ts.
 *
 * `/correct` records the correction without waiting for a model to notice one: it opens the
 * correction for the last answer, then its text is sent as the person's message (the command
 * service runs it through the delivery path, `correctionTurn`). So the person gets the corrected
 * answer at once, and the lesson is learned exactly as after a 👎 and a reply: one path, one case.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { Inbound, Platform } from "../ground/types.ts";
import { commandSyntax } from "../ground/typed-command.ts";
import { scopeOf, type Place } from "../history/store/store.ts";
import type { Learning } from "../learning/learning.ts";

export interface FeedbackCommandDeps {
  learning: Pick<Learning, "openCorrection" | "withdrawCorrection" | "praiseLastAnswer">;
}

/** What `/correct` does next: answer at once, or run the person's words as their message (a turn). */
export type CorrectStep = { kind: "reply"; reply: CommandReply } | { kind: "turn"; inbound: Inbound; correctionId: string };

const usage = (platform: Platform) => commandSyntax(platform, { name: "correct", args: ["<what was wrong>"] });

export const CORRECT_WHAT = (platform: Platform) =>
  `What was wrong with my last answer? Send \`${usage(platform)}\`: I'll answer again with it applied and remember it for next time.`;
export const NOTHING_TO_CORRECT = "There is no answer of mine in this conversation to correct yet.";
export const CORRECTED_ALREADY = (platform: Platform) =>
  `My last answer here has a correction already (see \`${commandSyntax(platform, { name: "lessons", args: [] })}\`). If there is more, just tell me in a message.`;
export const GOOD_NOTED = "Thanks — noted.";
const GOOD_AGAIN = "Noted already — thanks.";
const NOTHING_TO_PRAISE = "There is no answer of mine in this conversation to mark as good yet.";

/** `/correct <text>`: the reply to show now, or the turn to run with the correction open. */
export async function prepareCorrection(deps: FeedbackCommandDeps, inbound: Inbound, place: Place, text: string): Promise<CorrectStep> {
  const said = text.trim();
  if (!said) return { kind: "reply", reply: { text: CORRECT_WHAT(inbound.platform), ephemeral: true } };
  const opened = await deps.learning.openCorrection(scopeOf(place));
  if (opened.kind === "no_answer") return { kind: "reply", reply: { text: NOTHING_TO_CORRECT, ephemeral: true, outcome: "not_found" } };
  if (opened.kind === "taken") return { kind: "reply", reply: { text: CORRECTED_ALREADY(inbound.platform), ephemeral: true, outcome: "refused" } };
  // The person's words, verbatim, are the message the lesson's case quotes; a slash command has no permalink.
  const { link: _none, ...rest } = inbound;
  return { kind: "turn", inbound: { ...rest, text: said }, correctionId: opened.id };
}

/**
 * `/correct` where no turn can be run (the port's `command`, which shows its answer itself): says
 * where it works. Nothing is opened, so nothing waits for the person's next message.
 */
export function correctElsewhere(inbound: Inbound, text: string): CommandReply {
  if (!text.trim()) return { text: CORRECT_WHAT(inbound.platform), ephemeral: true };
  return { text: `Send \`${usage(inbound.platform)}\` in the conversation where I answered: I answer it there, with the correction applied.`, ephemeral: true };
}

/** `/good`: the last answer praised, as a 👍 on it does. */
export async function goodCommand(deps: FeedbackCommandDeps, place: Place): Promise<CommandReply> {
  const praised = await deps.learning.praiseLastAnswer(scopeOf(place));
  if (praised === "no_answer") return { text: NOTHING_TO_PRAISE, ephemeral: true, outcome: "not_found" };
  return { text: praised === "recorded" ? GOOD_NOTED : GOOD_AGAIN, ephemeral: true, outcome: "done" };
}
