/**
 * Feedback typed as a command on the conversation's last answer: `/correct <text>` and `/good`, the
 * console's 👎 and 👍 (it has no reactions), on every platform. Each enters the loop a reaction does.
 * - `/correct`: a correction opened for the last answer as a 👎 opens one, without the question
 *   (the person said what was wrong already). The command then sends their words through the
 *   delivery path as their message: the turn claims the correction (turn.ts), answers with it
 *   applied (correction-frame.ts), and the lesson job takes it once that answer is posted, with the
 *   case a 👎's has (question, wrong answer, their words verbatim, who, link).
 * - `/good`: the `feedback` job a 👍 queues (feedback-job.ts), once per answer and person.
 */
import type { Scope } from "../ground/types.ts";
import type { LearningContext } from "./context.ts";
import type { FeedbackPayload } from "./feedback-job.ts";

/** What `/correct` found to correct. */
export type OpenedCorrection =
  /** Open for the last answer: the person's next message in the conversation (their words) claims it. */
  | { kind: "opened"; id: string; replyMessageId: number }
  /** No answer of cairn's to a person in this conversation. */
  | { kind: "no_answer" }
  /** That answer was corrected already (by this person or someone else), or someone else's 👎 asks for it. */
  | { kind: "taken" };

type Deps = Pick<LearningContext, "reviews" | "corrections" | "jobs" | "now" | "settings">;

export async function openCorrection(ctx: Deps, scope: Scope): Promise<OpenedCorrection> {
  const last = await ctx.reviews.lastReply(scope);
  if (!last) return { kind: "no_answer" };
  const opened = await ctx.corrections.open({ workspaceId: scope.workspaceId, conversationId: scope.conversationId, replyMessageId: last.id, reactorId: scope.personId });
  if (opened) return { kind: "opened", id: opened.id, replyMessageId: last.id };
  // One correction per answer. Their own 👎 asked for it: the turn claims that one, as their reply would.
  const earlier = await ctx.corrections.ofReply(scope, last.id);
  const since = ctx.now().getTime() - ctx.settings.learning.correctionWindowMs;
  if (earlier?.status === "asked" && earlier.reactorId === scope.personId && earlier.createdAt.getTime() >= since) return { kind: "opened", id: earlier.id, replyMessageId: last.id };
  return { kind: "taken" };
}

/** `/good`: "recorded" (the job is queued), "duplicate" (this person praised this answer already) or "no_answer". */
export async function praiseLastAnswer(ctx: Deps, scope: Scope): Promise<"recorded" | "duplicate" | "no_answer"> {
  const last = await ctx.reviews.lastReply(scope);
  if (!last) return "no_answer";
  const payload: FeedbackPayload = {
    replyMessageId: last.id,
    conversationId: scope.conversationId,
    workspaceId: scope.workspaceId,
    reactorId: scope.personId,
    emoji: "👍",
    // A fixed meaning, as a platform's feedback button has: whatever the emoji settings say.
    signal: "positive",
    action: "added",
    at: ctx.now().toISOString(),
  };
  // A platform takes one 👍 per person on a message: so does `/good`, without a time in its key.
  const { created } = await ctx.jobs.enqueue("feedback", payload, { uniqueKey: `feedback:good:${last.id}:${scope.personId}` });
  return created ? "recorded" : "duplicate";
}
