/**
 * The `record_correction` tool: a correction typed in words enters the same learning loop as a 👎.
 * The turn's model is reading the conversation already, so it judges whether the person's message
 * corrects cairn's previous answer or behaviour; no extra model call per turn. What is recorded is
 * the person's own message and the answer it corrects (CorrectionStore.recordTyped); the lesson job
 * distils it once the corrected answer is posted.
 */
import { z } from "zod";
import { defineTool, ToolError } from "./registry.ts";
import type { Scope, TypedCorrection } from "../ground/types.ts";

const input = z.object({
  correction: z.string().min(1).max(500).describe("what the person says you got wrong and what is right, in one sentence (for the log; their own words are kept)"),
});

export const RECORD_CORRECTION = "record_correction";

export function correctionTool(record: (scope: Scope, messageId: number) => Promise<TypedCorrection>) {
  return defineTool({
    name: RECORD_CORRECTION,
    description: [
      "Call this when the person's latest message corrects your previous answer or how you behaved in this",
      "conversation: 'no, we use pnpm here', 'that's wrong, the freeze is on Fridays', 'don't paste the whole log'.",
      "It records the correction with the answer it corrects, and a lesson is saved from it automatically after",
      "you answer (for this channel, or for the person in a DM; a teammate can make it a team rule), so do not",
      "also save it with the memory tool. Then answer again with the correction applied and say briefly what changed.",
      "Do not call it for new information that corrects nothing you said, for a question, or for thanks.",
    ].join(" "),
    progress: "noting the correction",
    input,
    async run(_args, ctx) {
      if (ctx.sourceMessageId === null) throw new ToolError("There is no person's message in this turn to record as a correction.");
      const r = await record(ctx.scope, ctx.sourceMessageId);
      if (r.kind === "no_answer") throw new ToolError("There is no earlier answer of yours in this conversation for this message to correct; if it states a convention, save it with the memory tool as a lesson instead.");
      if (r.kind === "taken") return "This correction is recorded already; it will be saved as a lesson after you answer. Answer with the correction applied.";
      return "Recorded as a correction of your previous answer; it will be saved as a lesson after you answer. Now answer again with the correction applied, and say briefly what you changed.";
    },
  });
}
