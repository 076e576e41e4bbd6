/**
 * The `feedback` job: a reaction on one of cairn's messages, queued by Core.feedback.
 * - Negative (👎 ❌, or a platform's "Not right" button: FeedbackEvent.signal): counted; the
 *   lessons shown in that reply lose confidence; cairn asks in the reply's thread what it should
 *   have done, once per reply.
 * - Positive (👍 ✅ ⭐ 🎉): counted for the reply and for every skill it read; lessons shown gain.
 * - ✅ on a proposal post: an approval of the proposed team rule (approvals.ts) or change to a
 *   team skill (skill-proposals.ts); on cairn's reply to a message that asked for something kept
 *   for the team, a teammate's approval that shares it with the workspace (shares.ts).
 * Reactions by someone who could not see the message (another person's DM) do nothing.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import { placeOfJob, postIn, nameOf } from "./places.ts";
import { conversationOfPlace, scopeIn, workspaceOfPlace, type ReplyPlace } from "./reply-place-store.ts";
import { approveProposal } from "./approvals.ts";
import { approveSkillProposal } from "./skill-proposals.ts";
import { approveShare } from "./shares.ts";
import type { LearningContext } from "./context.ts";

export const FeedbackPayload = z.object({
  replyMessageId: z.number().int(),
  conversationId: z.string(),
  workspaceId: z.string(),
  reactorId: z.string(),
  emoji: z.string(),
  /** A platform control's fixed meaning (FeedbackEvent.signal); absent for a reaction. */
  signal: z.enum(["negative", "positive"]).optional(),
  action: z.enum(["added", "removed"]),
  at: z.string(),
});
export type FeedbackPayload = z.infer<typeof FeedbackPayload>;

/** Confidence moves: a correction weighs more than praise. */
const LOST_ON_CORRECTION = 0.25;
const GAINED_ON_PRAISE = 0.1;

export const CORRECTION_QUESTION = (name: string) =>
  `**${name}**, what should I have done instead? Reply here with the correction: I'll answer again with it applied and remember it for next time.`;

export function feedbackJob(ctx: LearningContext) {
  return defineJob({
    kind: "feedback",
    payload: FeedbackPayload,
    async run(p) {
      const place = await placeOfJob(ctx, p);
      if (!place || place.conversation.id !== p.conversationId) return;
      const scope = workspaceOfPlace(place);
      // In a DM only its owner sees the messages.
      if (place.conversation.isDm && place.conversation.ownerId !== p.reactorId) {
        ctx.log.info({ reply: p.replyMessageId }, "reaction from someone outside the DM ignored");
        return;
      }
      // One turn may have asked for both a skill and a fact for the team: the ✅ judges each.
      if (p.action === "added" && ctx.signals.approves(p.emoji) && ((await approveProposal(ctx, place, p.reactorId)) || [await approveSkillProposal(ctx, place, p.reactorId), await approveShare(ctx, place, p.reactorId)].some(Boolean))) return;
      // ✅ says the answer is right: the shared items it drew on still hold (issue 27).
      if (p.action === "added" && ctx.signals.approves(p.emoji)) await confirmDrawnOn(ctx, place, p);
      const signal = p.signal ?? ctx.signals.signal(p.emoji);
      if (!signal) return;
      const delta = p.action === "added" ? 1 : -1;
      await ctx.traces.count(conversationOfPlace(place), p.replyMessageId, signal, delta);
      // Removing a reaction takes its count back; what it started (a question, confidence) stays.
      if (p.action === "removed") return;
      const trace = await ctx.traces.get(scope, p.replyMessageId);
      if (signal === "positive") {
        await ctx.traces.creditSkills(scope, trace?.skills ?? []);
        // The lessons shown and the team rules in the prompt of an answer people liked: trusted more.
        await ctx.lessons.adjustConfidence(scope, [...(trace?.lessons ?? []), ...(trace?.rules ?? [])], GAINED_ON_PRAISE);
        return;
      }
      await ctx.lessons.adjustConfidence(scope, [...(trace?.lessons ?? []), ...(trace?.rules ?? [])], -LOST_ON_CORRECTION);
      // Only an answer to a person can be corrected (not a question, a proposal or a notice of cairn's).
      if (!place.question) return;
      const correction = await ctx.corrections.open({
        workspaceId: p.workspaceId,
        conversationId: place.conversation.id,
        replyMessageId: p.replyMessageId,
        reactorId: p.reactorId,
      });
      if (!correction) return;
      const reactor = await ctx.places.person(scope, p.reactorId);
      const posted = await postIn(ctx, place, CORRECTION_QUESTION(nameOf(reactor)));
      if (posted === null) return;
      await ctx.corrections.asked(correction.id, posted);
      ctx.log.info({ reply: p.replyMessageId, correction: correction.id }, "asked for a correction");
    },
  });
}

/**
 * ✅ on an answer confirms the shared items its trace says it drew on (rules, facts, lessons, skills
 * read), as far as the reactor may see them from where the answer was given (verify-store.ts).
 * Only ✅: a 👍 says an answer helped, not that everything behind it is still true.
 */
async function confirmDrawnOn(ctx: LearningContext, place: ReplyPlace, p: FeedbackPayload): Promise<void> {
  const scope = workspaceOfPlace(place);
  const [trace, reactor] = await Promise.all([ctx.traces.get(scope, p.replyMessageId), ctx.places.person(scope, p.reactorId)]);
  if (!trace || !reactor) return;
  const drewOn = [...trace.rules, ...trace.facts, ...trace.lessons, ...trace.skills];
  const prov = { source: "reaction" as const, actorId: reactor.id, sourceMessageId: p.replyMessageId, reason: "confirmed with ✅ on an answer that drew on it", at: new Date(p.at) };
  const confirmed = await ctx.verified.verify(scopeIn(place.conversation, reactor), drewOn, prov);
  if (confirmed.length) ctx.log.info({ reply: p.replyMessageId, confirmed: confirmed.length }, "shared items confirmed by ✅");
}
