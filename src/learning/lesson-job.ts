/**
 * The `lesson` job: a correction received (the reactor's message after cairn asked) becomes a
 * lesson, queued once the corrected answer was posted.
 * - In a DM: the person's private lesson. It never reaches anyone else, and is never promoted.
 * - In a channel: a channel lesson at once (that channel only), and a proposal in the thread: ✅ by
 *   someone else makes it a team rule (approvals.ts). The same correction made before by another
 *   person, or in another conversation, promotes it at once, and the post says so.
 * - A correction the scanner blocks teaches nothing; the person is told why.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import { MemoryError } from "../memory/store.ts";
import { scanForWrite } from "../safety/scanner.ts";
import { distill, overlap, type Distilled } from "./distill.ts";
import { excerpt, parseCase, QUOTE_CHARS, type LessonCase } from "../lessons/lesson-case.ts";
import type { MemoryEntry, Person } from "../lessons/lesson-store.ts";
import { nameOf, postIn, type ReplyPlace } from "./places.ts";
import { scopeOfPerson } from "./reply-place-store.ts";
import type { LearningContext } from "./context.ts";

export const LessonPayload = z.object({ correctionId: z.string(), workspaceId: z.string() });

/** Candidates the distiller may call "the same" or contradicted: a handful, by shared words. */
const CANDIDATES = 8;

export const LESSON_SAVED_DM = (rule: string) => `Saved as a lesson for you (private to you): **${rule}**`;
export const LESSON_PROPOSED = (rule: string, who: string, quote: string, replaces: string | null) =>
  [
    `Saved as a lesson for this channel: **${rule}**`,
    `(from ${who}'s correction: "${quote}")`,
    replaces ? `It would replace the team rule: "${replaces}".` : null,
    `React ✅ to make it a **team rule** for the whole workspace (anyone but ${who}, or an admin).`,
  ]
    .filter(Boolean)
    .join("\n");
export const RULE_PROMOTED = (rule: string, earlier: string) =>
  `The same correction was made before (${earlier}), so it is now a **team rule** for everyone in this workspace: **${rule}**`;
export const RULE_PENDING = (rule: string, earlier: string, replaces: string) =>
  `The same correction was made before (${earlier}), but it contradicts the team rule "${replaces}". React ✅ to replace that rule with: **${rule}**`;

/** A channel lesson the screen held: in no prompt until a teammate approves it. */
const LESSON_HELD = (lesson: MemoryEntry, reason: string) =>
  `I kept this lesson aside: the safety screen held it (${reason}). It is in no one's answers until a teammate approves it (\`/cairn approve ${lesson.id}\`, or Approve in the team view): **${lesson.text}**`;

export function lessonJob(ctx: LearningContext) {
  return defineJob({
    kind: "lesson",
    payload: LessonPayload,
    async run(p) {
      const workspace = await ctx.places.workspace(p.workspaceId);
      const correction = workspace && (await ctx.corrections.get(workspace, p.correctionId));
      // Learned or dropped already (a re-run after a lost lease): nothing more to do.
      if (!workspace || !correction || correction.status !== "received" || correction.correctionMessageId === null) return;
      const place = await ctx.places.replyPlace(workspace, correction.replyMessageId);
      const said = await ctx.corrections.said(correction);
      const reactor = await ctx.places.person(workspace, correction.reactorId);
      if (!place || !said || !reactor) return;
      const verdict = scanForWrite(said.text);
      if (!verdict.ok) {
        if (await ctx.corrections.drop(correction.id)) {
          ctx.log.warn({ correction: correction.id, reasons: verdict.reasons }, "correction refused by the scanner");
          await postIn(ctx, place, `I did not save that as a lesson: ${verdict.message}`);
        }
        return;
      }
      const text = verdict.text;
      const dm = place.conversation.isDm;
      const candidates = await candidateLessons(ctx, place, reactor, `${place.question?.text ?? ""}\n${text}`);
      const d = await distill(ctx.model, ctx.reviewModel, {
        workspaceId: place.workspace.id,
        question: place.question?.text ?? null,
        wrongAnswer: place.reply.text,
        correction: text,
        candidates: candidates.map((c) => ({ id: c.id, kind: c.kind, text: c.text })),
      });
      // A channel lesson is in front of everyone there: the model-judged screen reads it first (a DM's is the person's own).
      const screened = dm || !ctx.screen ? ({ verdict: "allow" } as const) : await ctx.screen.judge({ workspaceId: place.workspace.id, text: d.rule, reach: "everyone in this channel" });
      if (screened.verdict === "block") {
        if (await ctx.corrections.drop(correction.id)) await postIn(ctx, place, `I did not save that as a lesson: the safety screen refused it (${screened.reason}). Lessons say how the team works, not how to treat people.`);
        return;
      }
      const same = d.sameAs ? (candidates.find((c) => c.id === d.sameAs) ?? null) : null;
      const lessonCase: LessonCase = {
        question: place.question ? excerpt(place.question.text, 1000) : null,
        wrongAnswer: excerpt(place.reply.text, 1000),
        correction: excerpt(text, 1000),
        by: { id: reactor.id, name: nameOf(reactor) },
        at: said.createdAt.toISOString(),
        conversationId: place.conversation.id,
        channel: place.conversation.channelId,
        isDm: dm,
        replyMessageId: place.reply.id,
        correctionMessageId: said.id,
        // The permalink the adapter gave with the message when it was stored.
        link: said.link,
      };
      const quote = excerpt(text, QUOTE_CHARS);
      // Typed in words (the turn's record_correction): nobody was asked for it.
      const typed = correction.questionMessageId === null;
      const prov = { source: "reaction" as const, actorId: reactor.id, sourceMessageId: said.id, reason: `${typed ? "typed correction" : "correction"} of reply ${place.reply.id}` };
      let lesson: MemoryEntry;
      try {
        lesson = await ctx.lessons.learn(correction.id, {
          workspaceId: correction.workspaceId,
          target: dm ? "user" : "channel",
          ownerId: dm ? reactor.id : null,
          channelKey: dm ? null : place.conversation.channelId,
          text: d.rule,
          quote,
          origin: JSON.stringify(lessonCase),
          prov,
          ...(screened.verdict === "hold" ? { held: screened.reason } : {}),
        });
      } catch (err) {
        if (!(err instanceof MemoryError)) throw err;
        await ctx.corrections.drop(correction.id);
        await postIn(ctx, place, `I could not save that as a lesson: ${err.message}.`);
        return;
      }
      ctx.log.info({ correction: correction.id, lesson: lesson.id, byModel: d.byModel, same: same?.id ?? null }, "lesson learned");
      if (dm) {
        await postIn(ctx, place, LESSON_SAVED_DM(lesson.text));
        return;
      }
      if (screened.verdict === "hold") {
        await postIn(ctx, place, LESSON_HELD(lesson, screened.reason));
        return;
      }
      await settleChannelLesson(ctx, place, lesson, lessonCase, d, same, candidates);
    },
  });
}

/**
 * Lessons and rules a new correction may repeat or contradict. A DM correction is compared with the
 * person's own lessons only: it is private, so it never joins anyone else's to become a rule.
 */
async function candidateLessons(ctx: LearningContext, place: ReplyPlace, reactor: Person, text: string): Promise<MemoryEntry[]> {
  const rows = await ctx.lessons.candidates(scopeOfPerson(reactor), place.conversation.isDm);
  // Broader than the lessons shown with a message: a rule this one contradicts may share a single word with it.
  return rows
    .map((row) => ({ row, score: overlap(text, row.text) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, CANDIDATES)
    .map((r) => r.row);
}

async function settleChannelLesson(
  ctx: LearningContext,
  place: ReplyPlace,
  lesson: MemoryEntry,
  lessonCase: LessonCase,
  d: Distilled,
  same: MemoryEntry | null,
  candidates: readonly MemoryEntry[],
): Promise<void> {
  const contradicted = d.contradicts ? (candidates.find((c) => c.id === d.contradicts) ?? null) : null;
  const who = lessonCase.by.name;
  const earlierCase = same?.kind === "lesson" ? parseCase(same.origin) : null;
  // The same correction twice counts only from another person or another conversation.
  const repeated = same !== null && same.kind === "lesson" && (same.createdById !== lesson.createdById || (earlierCase !== null && earlierCase.conversationId !== lessonCase.conversationId));
  if (repeated) {
    const earlier = `by ${earlierCase?.by.name ?? "someone"}${earlierCase?.at ? ` on ${earlierCase.at.slice(0, 10)}` : ""}`;
    const prov = { source: "reaction" as const, actorId: lesson.createdById, sourceMessageId: lesson.sourceMessageId, reason: `the same correction twice (lessons ${same.id}, ${lesson.id})` };
    try {
      const pending = contradicted !== null;
      const origin = pending ? JSON.stringify({ ...lessonCase, fromLessons: [same.id, lesson.id] }) : lesson.origin;
      const rule = await ctx.lessons.promote({ workspaceId: lesson.workspaceId, from: [same, lesson], text: lesson.text, quote: lesson.quote, origin, replaces: contradicted, pending, teamBudget: ctx.settings.budgets.team, prov });
      ctx.log.info({ rule: rule.id, pending }, "the same correction twice: team rule");
      const posted = await postIn(ctx, place, pending ? RULE_PENDING(rule.text, earlier, contradicted.text) : RULE_PROMOTED(rule.text, earlier));
      if (pending && posted !== null) await ctx.lessons.markProposed(rule, { postId: posted });
      return;
    } catch (err) {
      if (!(err instanceof MemoryError)) throw err;
      ctx.log.warn({ err: err.message }, "promotion refused");
    }
  }
  const posted = await postIn(ctx, place, LESSON_PROPOSED(lesson.text, who, lesson.quote ?? "", contradicted?.text ?? null));
  if (posted !== null) await ctx.lessons.markProposed(lesson, { postId: posted, replacesId: contradicted?.id ?? null });
}

