/**
 * The `review` job: a background agent run over a conversation, after a reply was delivered, that
 * may save memory (kind "memory", every N person messages) or skills (kind "skills", after a turn
 * with many tool calls). It sees the conversation as its turns did: the session's frozen snapshot
 * as the system prompt, the session's messages through the reply, then the review prompt.
 *
 * Invariants kept here:
 * - Scope: the person whose message the reply answered, in that conversation, rebuilt from stored
 *   rows (reply-place-store.ts); the tools are memory and skills only (review-tools.ts).
 * - Everything written carries provenance "review" and the answered message's id; the stores scan
 *   every text written. A change to a team skill is not written but proposed, and posted after the
 *   notice for a teammate to approve (skill-proposals.ts).
 * - At most once per trigger: the job's unique key queues it once. A re-run of the same job (a lost
 *   lease, a crash after writing) finds the revisions (or skill proposals) its first run wrote,
 *   tagged with the trigger, and stops; a run that failed before writing anything is simply retried.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import { runToolLoop, type LoopResult } from "../agent/loop.ts";
import { buildRequest, historyToMessages } from "../agent/prompt.ts";
import { readSnapshot } from "../agent/sessions.ts";
import { errText, type Logger } from "../ground/log.ts";
import { nameOf, placeOfJob, postIn, type ReplyPlace } from "./places.ts";
import { conversationOfPlace, scopeIn, workspaceOfPlace } from "./reply-place-store.ts";
import { combinedReviewPrompt, memoryReviewPrompt, skillReviewPrompt, withReviewPrompt } from "./review-prompt.ts";
import { pendingIds, reviewNotice } from "./review-notice.ts";
import { ReviewLedger, reviewTools } from "./review-tools.ts";
import { postProposals } from "./skill-proposals.ts";
import type { LearningContext } from "./context.ts";

/** The tools a review writes with; a round of reads (skills_list, skill_view) goes on to the writes. */
const WRITE_TOOLS = new Set(["memory", "skill_manage"]);

export const ReviewPayload = z.object({
  /** `both`: one review of memory and skills, when both were due (review-triggers.ts). */
  kind: z.enum(["memory", "skills", "both"]),
  workspaceId: z.string(),
  conversationId: z.string(),
  /** The reply after which the review runs: the conversation is read through it. */
  replyMessageId: z.number().int(),
});
export type ReviewPayload = z.infer<typeof ReviewPayload>;

/** Model calls one review may make (tool rounds; a last answer without tools comes after). */
export const REVIEW_ITERATIONS = 16;

/** The reason every write of a review carries: names the trigger, so a re-run can find them. */
export const reviewTag = (p: Pick<ReviewPayload, "kind" | "replyMessageId">) => `${p.kind === "both" ? "memory and skill" : p.kind} review of reply ${p.replyMessageId}`;

export function reviewJob(ctx: LearningContext) {
  return defineJob({
    kind: "review",
    payload: ReviewPayload,
    run: (p, signal) => review(ctx, p, signal),
  });
}

async function review(ctx: LearningContext, p: ReviewPayload, signal: AbortSignal): Promise<void> {
  const log = ctx.log.child({ component: "review", kind: p.kind, conversation: p.conversationId, reply: p.replyMessageId });
  const place = await placeOfJob(ctx, p);
  const { question, asker } = place ?? {};
  if (!place || !question || !asker || place.conversation.id !== p.conversationId || place.reply.sessionId === null || place.reply.status !== "sent") return;
  const tag = reviewTag(p);
  if ((await ctx.traces.reviewWrote(workspaceOfPlace(place), question.id, tag)) || (await ctx.skillProposals.fromReview(conversationOfPlace(place), tag))) {
    log.info("this review wrote already (a re-run): nothing more to do");
    return;
  }
  const session = await ctx.places.session(conversationOfPlace(place), place.reply.sessionId);
  const snapshot = session ? readSnapshot(session) : null;
  // No snapshot: the session's prompt was never taken, or was cleared by an erasure. Nothing to review against.
  if (!session || !snapshot) return;

  const scope = scopeIn(place.conversation, asker);
  // The summary stands for the turns before its cut. A cut past the reviewed message (a later
  // turn compressed) would hide it: then the session is read from its start, without the summary.
  const cut = session.summaryThroughId !== null && session.summaryThroughId < question.id ? session.summaryThroughId : null;
  const messages = await ctx.history.sessionMessages(scope, session.id, cut, question.id);
  const name = nameOf(asker);
  const s = ctx.settings.learning;
  const promptInput = { name, isDm: place.conversation.isDm, maxWrites: s.reviewMaxWrites };
  const skillsRead = p.kind === "memory" ? [] : ((await ctx.traces.get(scope, p.replyMessageId))?.skills ?? []);
  const prompt = p.kind === "memory" ? memoryReviewPrompt(promptInput) : p.kind === "skills" ? skillReviewPrompt({ ...promptInput, skillsRead }) : combinedReviewPrompt({ ...promptInput, skillsRead });
  const ledger = new ReviewLedger(s.reviewMaxWrites);
  const tools = reviewTools({ memory: ctx.memory, skills: ctx.skills, proposals: ctx.skillProposals, turnTools: ctx.turnTools, ...(ctx.screen ? { screen: ctx.screen } : {}), ledger, signal, log, onCall: (tool, result) => ctx.metrics.toolCall(tool, result) });
  // The tools, snapshot, speaker and summary are the conversation's, so the request's prefix (the
  // API's cache key starts with the tools, then the system prompt) is byte-identical to its turns':
  // a review reads what the conversation's turns cached.
  const request = buildRequest({
    model: ctx.reviewModel,
    maxTokens: ctx.settings.maxTokens,
    snapshot,
    speakerId: asker.id,
    summary: cut === null ? null : session.summary,
    history: withReviewPrompt(historyToMessages(messages, !place.conversation.isDm), prompt),
    tools: tools.definitions(),
  });

  let result: LoopResult | null = null;
  try {
    result = await runToolLoop({
      model: ctx.model,
      request,
      tools,
      ctx: { scope, sourceMessageId: question.id, sessionId: session.id, speakerName: name, source: "review", reason: tag, onWrite: ledger.record },
      maxIterations: REVIEW_ITERATIONS,
      // Writes that all went through end the review: its closing words are read by no one.
      doneAfter: (round) => round.every((c) => !c.isError) && round.some((c) => WRITE_TOOLS.has(c.name)),
    });
  } catch (err) {
    // Nothing written yet: the job is retried. Something written: running again would write it
    // twice, so the review ends here and reports what it did.
    if (ledger.writes.length === 0) throw err;
    log.warn({ err: errText(err), writes: ledger.writes.length }, "the review's model call failed after it wrote; not retried");
  }
  log.info(
    { iterations: result?.iterations ?? null, writes: ledger.writes.length, pending: ledger.pending, suggested: ledger.proposals.length, proposed: ledger.proposed.length, stop: result?.stopReason ?? "failed" },
    "review done",
  );
  // A lost lease or a stopping worker: write nothing more, the notice included.
  if (signal.aborted) return;
  await notify(ctx, place, ledger, name, log);
  await postProposals(ctx, place, ledger.proposed, name, log);
}

/** Tells the person in the conversation; a ✅ on the notice confirms what it says is pending (Core.feedback). */
async function notify(ctx: LearningContext, place: ReplyPlace, ledger: ReviewLedger, name: string, log: Logger): Promise<void> {
  const text = reviewNotice(ctx.settings.learning.reviewNotice, ledger, name);
  if (!text) return;
  try {
    const posted = await postIn(ctx, place, text);
    const ids = pendingIds(ledger);
    if (posted !== null) await ctx.memory.markAnnounced(workspaceOfPlace(place), ids, posted);
  } catch (err) {
    // Best effort: failing the job would run the review again, and what it wrote stands either way.
    log.warn({ err: errText(err) }, "could not post the review's notice");
  }
}
