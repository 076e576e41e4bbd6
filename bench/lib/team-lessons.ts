/**
 * Lesson recall on conventions written the way teams write them: lessons in one channel share
 * words ("deploy", "staging", "API"), and questions paraphrase them, sharing a word or two. The
 * scripted benchmark in learning.ts gives each lesson a word of its own; this one shows what the
 * ranking (src/memory/lessons.ts) does when words overlap. Every lesson is taught through the memory
 * tool in one session; each question is asked in a later session of the same channel.
 */
import { benchCore, channelMessage, replyText } from "./core.ts";
import { openBenchDatabase } from "./db.ts";
import { fakeModel, lastUserText, promptText } from "./model.ts";
import { round } from "./report.ts";

interface Case {
  lesson: string;
  question: string;
}

export const TEAM_LESSONS: Case[] = [
  { lesson: "Deploys to staging need a ticket in #ops first.", question: "can I push the new API build to staging today?" },
  { lesson: "Production deploys only happen on Tuesdays and Thursdays.", question: "when can we ship this to production?" },
  { lesson: "Database migrations are reviewed by Priya before merge.", question: "who should look at my migration PR?" },
  { lesson: "Feature flags live in LaunchDarkly, not in environment variables.", question: "where do I add a feature flag for the beta?" },
  { lesson: "The payments service is owned by the billing team.", question: "who owns the payments service?" },
  { lesson: "Hotfixes branch from the release tag, never from main.", question: "which branch do I start a hotfix from?" },
  { lesson: "Logs older than 30 days are in the cold bucket; query them with Athena.", question: "how do I find logs from last quarter?" },
  { lesson: "On-call swaps go in #oncall with a PagerDuty override.", question: "I need to swap my on-call shift next week" },
  { lesson: "API keys for partners are issued by the platform team only.", question: "a partner is asking us for an API key, what do I do?" },
  { lesson: "Load tests run against the perf environment, never against staging.", question: "where should I run the load test?" },
];

export const UNRELATED_QUESTIONS = [
  "what's for lunch today?",
  "can you summarise this article about climate policy?",
  "write a haiku about autumn",
  "what time is the all-hands?",
  "explain what a monad is",
];

export interface TeamLessonsResult {
  lessons: number;
  questions: number;
  lessonRecall: number;
  pollution: number;
  lessonsPerPrompt: number;
  unrelatedWithLessons: number;
}

export async function runTeamLessons(): Promise<TeamLessonsResult> {
  const bench = await openBenchDatabase("learnteam");
  try {
    let clock = Date.parse("2026-05-01T09:00:00Z");
    const model = fakeModel(
      (req) => {
        // The correction is the person's own line, after any lessons shown with it.
        const taught = /(?:^|\n|\] )No: ([^\n]*)$/.exec(lastUserText(req));
        const last = req.messages.at(-1);
        const afterTool = last && typeof last.content !== "string" && last.content.some((b) => b.type === "tool_result");
        if (taught && !afterTool) return { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "channel", kind: "lesson", content: taught[1]!.trim() }] } }] };
        return { text: "ok" };
      },
      { record: true },
    );
    const core = await benchCore(bench.database, model, { bundledSkillsDir: null }, () => new Date(clock));
    let seq = 0;
    const say = (text: string) => replyText(core, channelMessage("team-ws", "UTEACH", "C-eng", text, `team-${seq++}`, new Date(clock), false));
    for (const c of TEAM_LESSONS) await say(`No: ${c.lesson}`);
    const present = (prompt: string) => TEAM_LESSONS.filter((c) => prompt.includes(c.lesson)).map((c) => c.lesson);
    const asked: { needed: string | null; seen: string[] }[] = [];
    for (const [needed, question] of [...TEAM_LESSONS.map((c) => [c.lesson, c.question] as const), ...UNRELATED_QUESTIONS.map((q) => [null, q] as const)]) {
      clock += 3 * 60 * 60 * 1000; // a new session for every question
      const before = model.requests.length;
      await say(question);
      asked.push({ needed, seen: present(model.requests.slice(before).map(promptText).join("\n")) });
    }
    const related = asked.filter((a) => a.needed !== null);
    const shown = asked.reduce((n, a) => n + a.seen.length, 0);
    const irrelevant = asked.reduce((n, a) => n + a.seen.filter((l) => l !== a.needed).length, 0);
    return {
      lessons: TEAM_LESSONS.length,
      questions: asked.length,
      lessonRecall: round((100 * related.filter((a) => a.seen.includes(a.needed!)).length) / related.length, 1),
      pollution: shown === 0 ? 0 : round((100 * irrelevant) / shown, 1),
      lessonsPerPrompt: round(shown / asked.length, 2),
      unrelatedWithLessons: asked.filter((a) => a.needed === null && a.seen.length > 0).length,
    };
  } finally {
    await bench.close();
  }
}
