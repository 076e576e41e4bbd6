/**
 * When a conversation is reviewed (review.ts). Teams talk in short threads and say little per
 * thread, so a review is due:
 * - memory: every `reviewEveryTurns` person messages since the last memory review, and when the
 *   conversation ends (`/new`, the session's idle timeout, a thread quiet for `reviewIdleMs`) with
 *   at least `reviewMinTurns` person messages since then;
 * - skills: once the turns since the last skill review made `skillReviewToolCalls` tool calls in all.
 * When both are due, one review does both. A review is keyed by the conversation and the reply it
 * reads through, so each trigger queues it once, whichever process or trigger comes first; the
 * conversation's marks then say where the next one starts.
 */
import type { ConversationScope } from "../ground/types.ts";
import type { LearningSettings } from "./settings.ts";
import { reviewKey, type ReviewCounts, type ReviewedReply, type ReviewStore } from "./review-store.ts";
import type { JobQueue } from "../jobs/job-store.ts";

export type ReviewKind = "memory" | "skills" | "both";

type TriggerSettings = Pick<LearningSettings, "reviewEveryTurns" | "skillReviewToolCalls" | "reviewMinTurns">;

/** The review `since` makes due, or null; `ending`: the conversation just ended or went quiet. */
export function reviewDue(s: TriggerSettings, since: ReviewCounts, ending: boolean): ReviewKind | null {
  const memory = (s.reviewEveryTurns > 0 && since.turns >= s.reviewEveryTurns) || (ending && s.reviewMinTurns > 0 && since.turns >= s.reviewMinTurns);
  const skills = s.skillReviewToolCalls > 0 && since.calls >= s.skillReviewToolCalls;
  return memory && skills ? "both" : memory ? "memory" : skills ? "skills" : null;
}

/** What review is due after `reply`, or null, read from the store (ReviewStore.afterDelivered reads the same counts at once). */
export async function dueReview(store: ReviewStore, s: TriggerSettings, scope: ConversationScope, reply: ReviewedReply, ending: boolean): Promise<ReviewKind | null> {
  const last = await store.lastReviewed(scope);
  const fresh = (r: ReviewedReply | null) => r === null || r.id < reply.id;
  const [turns, calls] = await Promise.all([
    fresh(last.memory) ? store.personMessages(scope, last.memory?.replyToId ?? null, reply.replyToId) : 0,
    s.skillReviewToolCalls > 0 && fresh(last.skills) ? store.toolCalls(scope, last.skills?.id ?? null, reply.id) : 0,
  ]);
  return reviewDue(s, { turns, calls }, ending);
}

export interface ReviewTriggerDeps {
  store: ReviewStore;
  jobs: Pick<JobQueue, "enqueue">;
  settings: TriggerSettings;
}

/** Queues the review due after `reply`, if one is; whether one was queued now. */
export async function queueDueReview(
  deps: ReviewTriggerDeps,
  scope: ConversationScope,
  reply: ReviewedReply,
  ending: boolean,
): Promise<boolean> {
  const kind = await dueReview(deps.store, deps.settings, scope, reply, ending);
  return kind ? queueReview(deps, scope, reply, kind) : false;
}

/** Queues a review of `kind` reading through `reply` and moves the marks; whether it was queued now. */
export async function queueReview(deps: ReviewTriggerDeps, scope: ConversationScope, reply: ReviewedReply, kind: ReviewKind): Promise<boolean> {
  const payload = { kind, workspaceId: scope.workspaceId, conversationId: scope.conversationId, replyMessageId: reply.id };
  const { created } = await deps.jobs.enqueue("review", payload, { uniqueKey: reviewKey(scope.conversationId, reply.id) });
  // Queued first, then marked: a crash between costs at most a review of the same turns again.
  await deps.store.mark(scope, { memory: kind !== "skills", skills: kind !== "memory" }, reply.id);
  return created;
}
