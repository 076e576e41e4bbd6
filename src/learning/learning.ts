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
import type { ConversationScope, Scope, WorkspaceScope } from "../ground/types.ts";
import type { ReplyTrace, TurnDrew } from "./trace-store.ts";
import type { ClaimedCorrection } from "./correction-store.ts";
import type { TypedCorrection } from "../ground/types.ts";
import { EmojiSignals } from "./emoji.ts";
import { feedbackJob } from "./feedback-job.ts";
import { openCorrection, praiseLastAnswer, type OpenedCorrection } from "./command-feedback.ts";
import { lessonJob } from "./lesson-job.ts";
import { reviewJob } from "./review.ts";
import { remindJobs } from "./remind-job.ts";
import { contradictionJob, modelNominator, queueContradictionCheck } from "./contradictions.ts";
import { queueDueReview, queueReview, reviewDue, type ReviewTriggerDeps } from "./review-triggers.ts";
import type { ReviewStore } from "./review-store.ts";
import { errText } from "../ground/log.ts";
import type { LearningContext, LearningDeps } from "./context.ts";
import { instrumentModel } from "../agent/model-metrics.ts";
import { judgeById, type Judgement } from "./approvals.ts";
import { judgeSkillById, type SkillJudgement } from "./skill-proposals.ts";
import { judgeShareById, type ShareJudgement } from "./shares.ts";
import type { SkillProposal } from "../skills/proposal-store.ts";
import type { MemoryEntry } from "../lessons/lesson-store.ts";
import { scopeOf, type Place } from "../history/store/store.ts";
import type { ConflictPair, Verdict } from "../memory/conflict-store.ts";
import type { LessonStore } from "../lessons/lesson-store.ts";
import type { VerifyStore } from "../memory/verify-store.ts";
import type { FreshnessSettings } from "./settings.ts";
import type { ModelClient } from "../agent/model.ts";

/** A team rule in front of this many corrected answers within DOUBTFUL_DAYS is doubtful. */
export const DOUBTFUL_AFTER = 2;
export const DOUBTFUL_DAYS = 30;

/** A proposal judged by id (`/cairn approve|reject`): a team rule's, or a change to a team skill. */
export type Judged =
  | { of: "rule"; entry: MemoryEntry; judgement: Judgement }
  | { of: "skill"; proposal: SkillProposal; judgement: SkillJudgement }
  | { of: "fact"; entry: MemoryEntry; judgement: ShareJudgement };

/** How often quiet conversations are looked for, at most (and no less often than the idle time). */
const QUIET_SWEEP_MS = 60_000;
/** A conversation quiet longer than this before the sweep saw it is left alone (it was reviewed, or is old news). */
const QUIET_LOOKBACK_MS = 24 * 60 * 60 * 1000;
/** Quiet conversations looked at per sweep. */
const QUIET_BATCH = 200;

export class Learning {
  readonly ctx: LearningContext;
  readonly worker: JobWorker;
  private readonly reviews: ReviewStore;
  private readonly triggers: ReviewTriggerDeps;
  /** Conversations the sweep looked at, by the last message it saw. */
  private readonly swept = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;

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
    const checks = as("contradiction");
    const nominator = modelNominator(checks.model, deps.settings.summaryModel);
    const handlers = [feedbackJob(as("feedback")), lessonJob(as("lesson")), reviewJob(as("review")), ...remindJobs(as("remind")), contradictionJob({ ...checks, nominator }), ...more(as)];
    this.worker = new JobWorker(deps.jobs, handlers, deps.log.child({ component: "jobs" }), s.worker, deps.metrics);
    // Every entry that comes into force is checked against those near it, on the worker.
    if (s.contradictions) deps.memory.onLanded = queueContradictionCheck(deps.jobs, deps.log, () => this.worker.kick());
    this.reviews = deps.reviews;
    this.triggers = { store: deps.reviews, jobs: deps.jobs, settings: s };
  }

  /** Lessons and team rules, for the commands that list and archive them. */
  get lessons(): LessonStore {
    return this.ctx.lessons;
  }

  /** Shared memory's freshness (issue 27): `/cairn verify`, the views' "Due for confirmation", with the windows and the clock. */
  get freshness(): { store: VerifyStore; settings: FreshnessSettings; now: () => Date } {
    return { store: this.ctx.verified, settings: this.ctx.settings.learning.freshness, now: this.ctx.now };
  }

  /** The model commands run with (/cairn learn), counted as "command", and the model reviews and lessons are written with. */
  get model(): { client: ModelClient; name: string } {
    return { client: this.ctx.model, name: this.ctx.reviewModel };
  }

  /** `/cairn approve|reject <id>` (approvals.ts, skill-proposals.ts): null when no proposal of the workspace has the id. */
  async judgeProposal(place: Place, verdict: "approve" | "reject", id: string): Promise<Judged | null> {
    // First: a lesson asked for the team is also a lesson, which the rule judgement would call closed.
    const shared = await judgeShareById(this.ctx, place, verdict, id);
    if (shared) return { of: "fact", ...shared };
    const rule = await judgeById(this.ctx, place, verdict, id);
    if (rule) return { of: "rule", ...rule };
    const skill = await judgeSkillById(this.ctx, place, verdict, id);
    return skill && { of: "skill", ...skill };
  }

  /** Open disagreements between entries this place reads (the views). */
  disputes(scope: Scope): Promise<ConflictPair[]> {
    return this.ctx.conflicts.open(scope);
  }

  /** What each entry replaced, from its own scope: the views' "since … (was: …)". */
  previousTexts(scope: WorkspaceScope, entries: readonly MemoryEntry[]): Promise<Map<string, { text: string; until: Date }>> {
    return this.ctx.memoryHistory.previousOf(scope, entries);
  }

  /** `/cairn keep new|old|both <id>`: the open pair the asker may see, settled with a revision naming them. */
  async settleConflict(place: Place, verdict: Verdict, id: string): Promise<{ kind: "done"; pair: ConflictPair } | { kind: "not_found" | "closed" }> {
    const pair = await this.ctx.conflicts.pair(scopeOf(place), id);
    if (!pair) return { kind: "not_found" };
    const done = await this.ctx.conflicts.resolve(pair, verdict, { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: `keep ${verdict}: decided by a person`, at: this.ctx.now() });
    return done ? { kind: "done", pair } : { kind: "closed" };
  }

  /** Entries asked for the team and waiting for a teammate: kept in `channels` (the ones the viewer reads), or asked from a DM. */
  pendingShares(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<MemoryEntry[]> {
    return this.ctx.shares.waiting(scope, channels);
  }

  /** Changes to team skills waiting for approval, made in conversations of `channels` (the ones the viewer reads). */
  pendingSkillChanges(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<SkillProposal[]> {
    return this.ctx.skillProposals.pending(scope, channels);
  }

  /** The correction this message answers, when cairn asked its author for one here. */
  claimCorrection(scope: Scope, messageId: number): Promise<ClaimedCorrection | null> {
    return this.ctx.corrections.claim(scope, messageId);
  }

  /**
   * Team rules judged by their results: a rule in the prompt of DOUBTFUL_AFTER or more answers
   * corrected within DOUBTFUL_DAYS is doubtful (shown to the model as such, snapshot.ts).
   */
  async doubtfulRules(scope: WorkspaceScope): Promise<ReadonlySet<string>> {
    const since = new Date(this.ctx.now().getTime() - DOUBTFUL_DAYS * 24 * 60 * 60 * 1000);
    const found = await this.ctx.traces.rulesBeforeCorrections(scope, since);
    // A rule kept or reworded since (`keep`, `reword`) counts only the corrections after that.
    const cleared = await this.ctx.lessons.doubtClearedAt(scope, [...found.keys()]);
    const counted = [...found].map(([id, dates]) => [id, dates.filter((d) => !cleared.has(id) || d > cleared.get(id)!).length] as const);
    return new Set(counted.filter(([, n]) => n >= DOUBTFUL_AFTER).map(([id]) => id));
  }

  /** The conversation's latest answer and what it drew on (`/cairn why`); null when there is none. */
  async lastAnswer(scope: ConversationScope): Promise<{ replyId: number; questionId: number; trace: ReplyTrace | null } | null> {
    const reply = await this.reviews.lastReply(scope);
    return reply && { replyId: reply.id, questionId: reply.replyToId, trace: await this.ctx.traces.get(scope, reply.id) };
  }

  /** What one reply of the workspace drew on (`why` about a message): null when its turn drew on nothing. */
  traceOf(scope: WorkspaceScope, replyId: number): Promise<ReplyTrace | null> {
    return this.ctx.traces.get(scope, replyId);
  }

  /** A correction the person typed, as the turn's model judged it (the `record_correction` tool). */
  recordTypedCorrection(scope: Scope, messageId: number): Promise<TypedCorrection> {
    return this.ctx.corrections.recordTyped(scope, messageId);
  }

  /** `/correct <text>`: a correction opened for the conversation's last answer (command-feedback.ts). */
  openCorrection(scope: Scope): Promise<OpenedCorrection> {
    return openCorrection(this.ctx, scope);
  }

  /** A `/correct` whose turn did not claim its correction: taken back (CorrectionStore.withdraw). */
  withdrawCorrection(id: string): Promise<boolean> {
    return this.ctx.corrections.withdraw(id);
  }

  /** `/good`: the conversation's last answer praised, as a 👍 does (command-feedback.ts). */
  async praiseLastAnswer(scope: Scope): Promise<"recorded" | "duplicate" | "no_answer"> {
    const praised = await praiseLastAnswer(this.ctx, scope);
    if (praised === "recorded") this.worker.kick();
    return praised;
  }

  /**
   * What the turn drew on, stored with its reply (`traced`: the reply's own statement stored it,
   * turn-end-store.ts); the lessons shown were used now (the curator archives unused ones).
   */
  async recordTurn(scope: Scope, replyMessageId: number, drew: TurnDrew, opts: { traced?: boolean } = {}): Promise<void> {
    if (!opts.traced) await this.ctx.traces.record({ ...drew, replyMessageId, workspaceId: scope.workspaceId, conversationId: scope.conversationId });
    await this.ctx.lessons.markUsed(scope, drew.lessonIds, this.ctx.now());
  }

  /**
   * A reply was posted: queue what it triggers. The review due (review-triggers.ts: every N person
   * messages, or enough tool calls, since the last), and the lesson of a correction it answered.
   */
  async afterDelivered(replyMessageId: number, conversationId: string): Promise<void> {
    const { jobs, reviews } = this.ctx;
    // On the delivery path (the conversation's next answer waits for it): everything it reads, one statement.
    const after = await reviews.afterDelivered(conversationId, replyMessageId, this.triggers.settings.skillReviewToolCalls > 0);
    if (!after) return;
    const { reply, scope, correctionId } = after;
    const kind = reviewDue(this.triggers.settings, after.since, false);
    const [reviewed, lesson] = await Promise.all([
      kind ? queueReview(this.triggers, scope, reply, kind) : false,
      correctionId ? jobs.enqueue("lesson", { correctionId, workspaceId: scope.workspaceId }, { uniqueKey: `lesson:${correctionId}` }).then((r) => r.created) : false,
    ]);
    if (reviewed || lesson) this.worker.kick();
  }

  /**
   * A conversation ended (`/new`, the console starting afresh) or went quiet: a memory review of
   * what was said since the last one, if enough was (`reviewMinTurns`).
   */
  async conversationEnded(scope: ConversationScope): Promise<boolean> {
    const last = await this.reviews.lastReply(scope);
    if (!last) return false;
    const queued = await queueDueReview(this.triggers, scope, last, true);
    if (queued) this.worker.kick();
    return queued;
  }

  /**
   * The conversations quiet for `reviewIdleMs` (within the day before): each gets the review due
   * at its end. A conversation is looked at again only after it spoke again.
   */
  async sweepQuiet(): Promise<number> {
    const s = this.ctx.settings.learning;
    if (s.reviewMinTurns <= 0) return 0;
    const until = new Date(this.ctx.now().getTime() - s.reviewIdleMs);
    const quiet = await this.reviews.quiet(new Date(until.getTime() - QUIET_LOOKBACK_MS), until, QUIET_BATCH);
    let queued = 0;
    for (const { scope, lastMessageAt } of quiet) {
      if (this.swept.get(scope.conversationId) === lastMessageAt.getTime()) continue;
      if (await this.conversationEnded(scope)) queued++;
      this.swept.set(scope.conversationId, lastMessageAt.getTime());
    }
    return queued;
  }

  start(): void {
    this.worker.start();
    const every = Math.min(QUIET_SWEEP_MS, this.ctx.settings.learning.reviewIdleMs);
    this.sweeper = setInterval(() => {
      this.sweepQuiet().catch((err: unknown) => this.ctx.log.warn({ err: errText(err) }, "could not look for quiet conversations to review"));
    }, every);
    this.sweeper.unref?.();
  }

  stop(graceMs?: number): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    return this.worker.stop(graceMs);
  }

  /** Runs every due job now, one after another (scripts, tests, the demo). */
  drain(): Promise<void> {
    return this.worker.drain();
  }
}
