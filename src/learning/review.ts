/**
 * The `review` job: a background agent run over a conversation, after the reply was delivered,
 * that may save memory (kind "memory") or skills (kind "skills"). Implemented in the next commit.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import type { LearningContext } from "./context.ts";

export const ReviewPayload = z.object({
  kind: z.enum(["memory", "skills"]),
  workspaceId: z.string(),
  conversationId: z.string(),
  /** The reply after which the review runs: the conversation is read through it. */
  replyMessageId: z.number().int(),
});
export type ReviewPayload = z.infer<typeof ReviewPayload>;

export function reviewJob(ctx: LearningContext) {
  return defineJob({
    kind: "review",
    payload: ReviewPayload,
    async run(p) {
      ctx.log.debug({ conversation: p.conversationId, kind: p.kind }, "review not built yet");
    },
  });
}
