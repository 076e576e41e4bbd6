/**
 * Learning-loop efficacy, the seeds' A/B/C ablation, with a fake model whose answer is right only
 * when the lesson it needs is in its prompt (system prompt, history or a tool result). 50
 * conventions in 5 channels: in one session someone asks, cairn answers wrong, the person corrects
 * it; in a later session they ask a related question, and an unrelated one.
 *   A: nothing is saved.  B: the correction is saved to channel memory as a lesson (memory tool,
 *   kind "lesson": shown with later messages it is relevant to, not in every prompt).
 *   C: B, and procedural conventions also become a skill (skill_manage), read with skill_view.
 *   B-facts: B with the correction saved as an ordinary fact (in every prompt of the channel): the
 *   baseline that shows what lessons recalled by relevance save.
 * Repeated-mistake rate: related questions answered wrong. Lesson recall: related questions whose
 * prompt held the lesson. Pollution: of the lessons present in a prompt, the share that the
 * question did not need (over all later questions).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { openBenchDatabase } from "./lib/db.ts";
import { benchCore, channelMessage, replyText } from "./lib/core.ts";
import { fakeModel, lastUserText, promptText, type Reply } from "./lib/model.ts";
import { round, table } from "./lib/report.ts";
import type { BenchOutcome } from "./run.ts";
import { LESSON_SETS, runTeamLessons } from "./lib/team-lessons.ts";
import { runLearningFlow } from "./lib/learning-flow.ts";
import { runReviewFlow } from "./lib/review-flow.ts";

const CHANNELS = ["backend", "frontend", "data", "ops", "design"];
const PER_CHANNEL = 10;

interface Lesson {
  id: number;
  channel: string;
  topic: string;
  text: string;
  procedural: boolean;
}

const LESSONS: Lesson[] = CHANNELS.flatMap((channel, c) =>
  Array.from({ length: PER_CHANNEL }, (_, k) => {
    const id = c * PER_CHANNEL + k;
    const topic = `topic${id}`;
    const procedural = k % 2 === 0;
    const text = procedural ? `Convention L${id}: to handle ${topic}, first run check-${id} then ask #${channel}.` : `Convention L${id}: ${topic} is owned by team-${id}.`;
    return { id, channel, topic, text, procedural };
  }),
);

type Variant = "A" | "B" | "B-facts" | "C";

const VARIANT_NAMES: Record<Variant, string> = {
  A: "A no memory/skills",
  "B-facts": "B memory, corrections as facts (baseline)",
  B: "B memory, corrections as lessons",
  C: "C memory + skills",
};

function lessonsIn(text: string): Set<number> {
  return new Set([...text.matchAll(/Convention L(\d+)/g)].map((m) => Number(m[1])));
}

async function runVariant(variant: Variant) {
  const bench = await openBenchDatabase(`learn${variant}`);
  try {
    let clock = Date.parse("2026-04-01T09:00:00Z");
    const questions: { lesson: number | null; right: boolean; present: Set<number> }[] = [];
    const respond = (req: Anthropic.MessageCreateParamsNonStreaming): Reply => {
      const user = lastUserText(req);
      const prompt = promptText(req);
      const correction = /(?:^|\] )No: (.*)$/s.exec(user);
      const lastMsg = req.messages.at(-1);
      const afterTool = lastMsg && typeof lastMsg.content !== "string" && lastMsg.content.some((b) => b.type === "tool_result");
      if (correction) {
        if (variant === "A" || afterTool) return { text: "Thanks, noted." };
        const lesson = LESSONS.find((l) => correction[1]!.includes(`L${l.id}:`))!;
        const uses: { name: string; input: unknown }[] = [{ name: "memory", input: { operations: [{ action: "add", target: "channel", kind: variant === "B-facts" ? "fact" : "lesson", content: lesson.text }] } }];
        if (variant === "C" && lesson.procedural) {
          const name = `handle-${lesson.topic}`;
          const content = `---\nname: ${name}\ndescription: Use when handling ${lesson.topic} in #${lesson.channel}\n---\n\n1. ${lesson.text}\n`;
          uses.push({ name: "skill_manage", input: { action: "create", name, content, scope: "channel" } });
        }
        return { toolUse: uses };
      }
      const asked = /about (topic\d+)/.exec(user)?.[1];
      const lesson = LESSONS.find((l) => l.topic === asked);
      if (lesson && !prompt.includes(`L${lesson.id}:`) && variant === "C" && !afterTool && prompt.includes(`handle-${lesson.topic}`)) {
        return { toolUse: [{ name: "skill_view", input: { name: `handle-${lesson.topic}` } }] };
      }
      return { text: lesson && prompt.includes(`L${lesson.id}:`) ? `Right: ${lesson.text}` : "A guess." };
    };
    const model = fakeModel(respond, { record: true });
    const core = await benchCore(bench.database, model, { bundledSkillsDir: null }, () => new Date(clock));
    const say = (l: Lesson, user: string, text: string) =>
      replyText(core, channelMessage("learn-ws", user, `C-${l.channel}`, text, `l-${variant}-${Math.random()}`, new Date(clock), false));
    // Session 1 for each convention: a question, a wrong answer, a correction.
    for (const l of LESSONS) {
      await say(l, "UANN", `What do we do about ${l.topic}?`);
      await say(l, "UANN", `No: ${l.text}`);
      clock += 3 * 60 * 60 * 1000; // past the idle gap: the next message starts a new session
    }
    // Later sessions: a related question, then an unrelated one.
    for (const l of LESSONS) {
      for (const [q, needed] of [[`Remind me about ${l.topic}?`, l.id], ["What time is the all-hands?", null]] as const) {
        const before = model.requests.length;
        const answer = await say(l, "UBO", q);
        const prompts = model.requests.slice(before).map(promptText).join("\n");
        questions.push({ lesson: needed, right: needed !== null && answer.startsWith("Right:"), present: lessonsIn(prompts) });
        clock += 3 * 60 * 60 * 1000;
      }
    }
    const related = questions.filter((q) => q.lesson !== null);
    const mistakes = related.filter((q) => !q.right).length;
    const recalled = related.filter((q) => q.present.has(q.lesson!)).length;
    const present = questions.reduce((n, q) => n + q.present.size, 0);
    const irrelevant = questions.reduce((n, q) => n + [...q.present].filter((id) => id !== q.lesson).length, 0);
    return {
      variant,
      relatedQuestions: related.length,
      repeatedMistakeRate: round((100 * mistakes) / related.length, 1),
      lessonRecall: round((100 * recalled) / related.length, 1),
      pollution: present === 0 ? 0 : round((100 * irrelevant) / present, 1),
      lessonsPerPrompt: round(present / questions.length, 1),
    };
  } finally {
    await bench.close();
  }
}

export async function run(): Promise<BenchOutcome> {
  const runs = [await runVariant("A"), await runVariant("B-facts"), await runVariant("B"), await runVariant("C")];
  const [a, , , c] = runs;
  const team = [];
  for (const set of LESSON_SETS) team.push(await runTeamLessons(set), await runTeamLessons(set, { embeddings: true }));
  const cut = a!.repeatedMistakeRate === 0 ? 0 : round(100 * (1 - c!.repeatedMistakeRate / a!.repeatedMistakeRate), 1);
  const flow = await runLearningFlow();
  const review = await runReviewFlow();
  const text = [
    `the whole loop, through the delivery path: ${flow.runs[1]!.sessions} sessions; 50 corrections by 👎 -> question -> correction -> lesson, half approved with ✅ by a teammate; then a related question in the same channel, in another channel, and an unrelated one (A: reactions teach nothing; C: the loop; T: the loop with the corrections typed in words, no reaction)`,
    table(
      ["variant", "corrections", "lessons", "team rules", "repeated mistakes %", "lesson recall %", "approved rules answered right elsewhere %", "unapproved lessons seen elsewhere", "lesson pollution %", "rules/prompt"],
      flow.runs.map((r) => [r.variant, r.questionsAsked, r.lessons, r.rules, r.repeatedMistakeRate, r.lessonRecall, r.rulesReachOtherChannels, r.channelLessonLeaks, r.pollution, r.rulesPerPrompt]),
    ),
    `C vs A (whole loop): repeated mistakes cut by ${flow.mistakesCut}%; T vs A (typed corrections): by ${flow.typedMistakesCut}%`,
    "",
    `background review (a memory review every 10th message of a conversation; 5 people, a DM and a channel thread each; a statement worth keeping every few messages, a fake review model saving the latest ones)`,
    table(
      ["turns", "reviews run", "review writes", "writes per 100 turns", "held pending %", "review prompt tokens, % of turns'", "of them a turn's prefix %"],
      [[review.turns, review.reviews, review.writes, review.writesPer100Turns, review.pendingShare, review.overheadShare, review.reviewPrefixShare]],
    ),
    "(goal: review tokens <= 20% of the turns', >= 80% of them a prefix the prompt cache serves; tokens estimated as characters / 4, the same for both)",
    "",
    `learning loop: ${LESSONS.length} corrections in ${CHANNELS.length} channels, then a related and an unrelated question each (goal for C: mistakes cut >= 80% vs A, recall >= 95%, pollution <= 5%)`,
    table(
      ["variant", "repeated mistakes %", "lesson recall %", "pollution %", "lessons/prompt"],
      runs.map((r) => [VARIANT_NAMES[r.variant], r.repeatedMistakeRate, r.lessonRecall, r.pollution, r.lessonsPerPrompt]),
    ),
    `C vs A: repeated mistakes cut by ${cut}%`,
    "",
    "lessons written as teams write them (each set: conventions of one channel sharing words, then a paraphrased question each and unrelated ones in later sessions; held-out: a second set written before the ranking was changed)",
    table(
      ["set", "conventions", "questions", "lesson recall %", "pollution %", "lessons/prompt", "unrelated questions shown a lesson"],
      team.map((t) => [t.set, t.lessons, t.questions, t.lessonRecall, t.pollution, t.lessonsPerPrompt, `${t.unrelatedWithLessons} of ${t.questions - t.lessons}`]),
    ),
  ].join("\n");
  return { name: "learning", table: text, result: { database: runs.length > 0 ? (await import("./lib/db.ts")).benchProvider() : "sqlite", flow, runs, review, mistakesCutCvsA: cut, teamLessons: team } };
}
