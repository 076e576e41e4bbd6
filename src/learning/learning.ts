/**
 * The learning loop, wired: the job worker and the loop's handlers (feedback, lesson, review) with
 * those the top adds (the report, the curator, the knowledge backfill), the correction a turn may
 * be answering, and what is queued once a reply was delivered.
 *
 * Invariants kept here:
 * - Nobody waits on learning: jobs are queued after the reply was posted and run on the worker.
 * - Every trigger is queued under a unique key, so it runs at most once however often the
 *   delivery is reported, and survives a crash between queueing and running.
 */
import type { JobHandler } from "../jobs/worker.ts";
import { JobWorker } from "../jobs/worker.ts";
import type { Scope } from "../ground/types.ts";
import type { LoopResult } from "../agent/loop.ts";
import type { ClaimedCorrection } from "./correction-store.ts";
import type { TypedCorrection } from "../ground/types.ts";
import { EmojiSignals } from "./emoji.ts";
import { feedbackJob } from "./feedback-job.ts";
import { lessonJob } from "./lesson-job.ts";
import { reviewJob, type ReviewPayload } from "./review.ts";
import type { LearningContext, LearningDeps } from "./context.ts";
import { instrumentModel } from "../agent/model-metrics.ts";
import { judgeById } from "./approvals.ts";
import type { Place } from "../history/store/store.ts";
import type { LessonStore } from "../lessons/lesson-store.ts";
import type { ModelClient } from "../agent/model.ts";

export class Learning {
  readonly ctx: LearningContext;
  readonly worker: JobWorker;

  /**
   * `more`: the other jobs the worker runs, given the context each of their kinds is counted
   * under (a kind already handled is taken over by the one given there).
   */
  constructor(deps: LearningDeps, more: (contextFor: (purpose: string) => LearningContext) => readonly JobHandler<unknown>[] = () => []) {
    const s = deps.settings.learning;
    this.ctx = {
      ...deps,
      // Outside the jobs, the context's model serves commands (/cairn learn).
      model: instrumentModel(deps.model, deps.metrics, "command"),
      signals: new EmojiSignals(s, deps.readEmoji),
      reviewModel: s.reviewModel ?? deps.settings.model,
    };
    // Each job's model calls are counted under its kind.
    const as = (purpose: string): LearningContext => ({ ...this.ctx, model: instrumentModel(deps.model, deps.metrics, purpose) });
    const handlers = [feedbackJob(as("feedback")), lessonJob(as("lesson")), reviewJob(as("review")), ...more(as)];
    this.worker = new JobWorker(deps.jobs, handlers, deps.log.child({ component: "jobs" }), s.worker, deps.metrics);
  }

  /** Lessons and team rules, for the commands that list and archive them. */
  get lessons(): LessonStore {
    return this.ctx.lessons;
  }

  /** The model commands run with (/cairn learn), counted as "command", and the model reviews and lessons are written with. */
  get model(): { client: ModelClient; name: string } {
    return { client: this.ctx.model, name: this.ctx.reviewModel };
  }

  /** `/cairn approve|reject <id>` (approvals.ts): null when no lesson or rule of the workspace has the id. */
  judgeProposal(place: Place, verdict: "approve" | "reject", id: string): ReturnType<typeof judgeById> {
    return judgeById(this.ctx, place, verdict, id);
  }

  /** The correction this message answers, when cairn asked its author for one here. */
  claimCorrection(scope: Scope, messageId: number): Promise<ClaimedCorrection | null> {
    return this.ctx.corrections.claim(scope, messageId);
  }

  /** A correction the person typed, as the turn's model judged it (the `record_correction` tool). */
  recordTypedCorrection(scope: Scope, messageId: number): Promise<TypedCorrection> {
    return this.ctx.corrections.recordTyped(scope, messageId);
  }

  /** What the turn drew on, stored with its reply; the lessons shown were used now (the curator archives unused ones). */
  async recordTurn(scope: Scope, replyMessageId: number, result: Pick<LoopResult, "toolCalls">, lessonIds: readonly string[]): Promise<void> {
    await this.ctx.traces.record({ replyMessageId, workspaceId: scope.workspaceId, conversationId: scope.conversationId, toolCalls: result.toolCalls, lessonIds });
    await this.ctx.lessons.markUsed(scope, lessonIds, this.ctx.now());
  }

  /**
   * A reply was posted: queue what it triggers. A memory review every `reviewEveryTurns` person
   * messages of the conversation, a skill review after a turn with many tool calls, and the lesson
   * of a correction it answered.
   */
  async afterDelivered(replyMessageId: number, conversationId: string): Promise<void> {
    const { places, jobs } = this.ctx;
    const s = this.ctx.settings.learning;
    const delivered = await places.deliveredReply(conversationId, replyMessageId);
    const replyToId = delivered?.reply.replyToId;
    if (!delivered || !replyToId) return;
    const { reply, scope } = delivered;
    const queued: Promise<unknown>[] = [];
    const review = (kind: ReviewPayload["kind"], key: string) =>
      jobs.enqueue("review", { kind, workspaceId: reply.workspaceId, conversationId, replyMessageId } satisfies ReviewPayload, { uniqueKey: key });
    // This runs on the delivery path (the conversation's next answer waits for it): the reads go out together.
    const [turns, trace, correction] = await Promise.all([
      s.reviewEveryTurns > 0 ? places.personMessagesThrough(scope, replyToId) : 0,
      s.skillReviewToolCalls > 0 ? this.ctx.traces.get(scope, replyMessageId) : null,
      this.ctx.corrections.receivedFor(scope, replyToId),
    ]);
    if (turns > 0 && turns % s.reviewEveryTurns === 0) queued.push(review("memory", `review:memory:${conversationId}:${turns}`));
    if (trace && trace.toolCalls >= s.skillReviewToolCalls) queued.push(review("skills", `review:skills:${replyMessageId}`));
    if (correction) queued.push(jobs.enqueue("lesson", { correctionId: correction.id, workspaceId: reply.workspaceId }, { uniqueKey: `lesson:${correction.id}` }));
    if (queued.length === 0) return;
    await Promise.all(queued);
    this.worker.kick();
  }

  start(): void {
    this.worker.start();
  }

  stop(graceMs?: number): Promise<void> {
    return this.worker.stop(graceMs);
  }

  /** Runs every due job now, one after another (scripts, tests, the demo). */
  drain(): Promise<void> {
    return this.worker.drain();
  }
}
