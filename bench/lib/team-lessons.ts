/**
 * Lesson recall on conventions written the way teams write them: lessons in one channel share
 * words ("deploy", "staging", "API"), and questions paraphrase them, sharing a word or two. The
 * scripted benchmark in learning.ts gives each lesson a word of its own; this one shows what the
 * ranking (src/lessons/recall.ts) does when words overlap. Every lesson is taught through the memory
 * tool in one session; each question is asked in a later session of the same channel.
 *
 * Two sets, each in a database of its own: the first ten conventions, and a held-out set written
 * apart from them, before the ranking was reworked on their account (other domains and wording,
 * words shared between lessons as well), so that a rule fitted to ten sentences shows it.
 */
import { benchCore, channelMessage, replyText } from "./core.ts";
import { openBenchDatabase } from "./db.ts";
import { startFakeEmbeddings } from "../../test/fakes/embeddings.ts";
import { fakeModel, lastUserText, promptText } from "./model.ts";
import { round } from "./report.ts";
import { CHANNEL_LESSON_SET } from "./channel-lessons.ts";

interface Case {
  lesson: string;
  question: string;
  /** The channel it is taught and asked in (default one channel for the whole set). */
  channel?: string;
}

export interface LessonSet {
  name: string;
  cases: Case[];
  unrelated: string[];
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

export const HELD_OUT_LESSONS: Case[] = [
  { lesson: "Refunds over $500 need sign-off from someone in finance.", question: "a customer wants a refund of $800, can I just approve it?" },
  { lesson: "Customer data exports are handled by the privacy team and never sent by email.", question: "a customer asked us to email them all the data we hold on them" },
  { lesson: "Production database access is granted for 24 hours through the access portal.", question: "how do I get access to the prod database to debug an issue?" },
  { lesson: "Security issues are reported in #sec-incidents, not in the team channel.", question: "I think I found a security hole in the login page, where do I report it?" },
  { lesson: "Design reviews are on Wednesdays; add your Figma link to the review doc.", question: "when is the next design review?" },
  { lesson: "Changes to the auth service need two approvals on the PR.", question: "how many approvals does my auth change need?" },
  { lesson: "Release notes are written by the feature's PM, not by engineering.", question: "who writes the release notes for the search feature?" },
  { lesson: "New dependencies need a license check by legal before they are added.", question: "is there anything I should check before adding a new npm dependency?" },
  { lesson: "Customer-facing emails about outages are reviewed by the support lead before sending.", question: "I drafted an email to customers about the outage, who should review it?" },
  { lesson: "Test data goes in the sandbox project, never in the production database.", question: "where should I put test data for the new report?" },
  { lesson: "Interview feedback is due in Greenhouse within 24 hours of the interview.", question: "how long do I have to write up my interview feedback?" },
  { lesson: "The support rotation changes on Mondays at 10am; swaps go in #support.", question: "who's on support this week?" },
  { lesson: "Secrets live in Vault; never paste them in Slack or commit them to the repo.", question: "where should I keep the new service's API secret?" },
  { lesson: "During an outage, update the status page every 30 minutes.", question: "how often should we post status updates while the site is down?" },
];
export const HELD_OUT_UNRELATED = [
  "any good podcast recommendations?",
  "how do I make a sourdough starter?",
  "what's the capital of Australia?",
  "can you review my cover letter before I send it?",
  "tell me a joke about cats",
];

export const LESSON_SETS: LessonSet[] = [
  { name: "team", cases: TEAM_LESSONS, unrelated: UNRELATED_QUESTIONS },
  { name: "held-out", cases: HELD_OUT_LESSONS, unrelated: HELD_OUT_UNRELATED },
  CHANNEL_LESSON_SET,
];

const DEFAULT_CHANNEL = "C-eng";

export interface TeamLessonsResult {
  set: string;
  lessons: number;
  questions: number;
  lessonRecall: number;
  pollution: number;
  lessonsPerPrompt: number;
  unrelatedWithLessons: number;
}

/**
 * `embeddings`: the same run with embeddings on (the endpoint CAIRN_EMBEDDINGS_URL / _MODEL name,
 * else the fake embeddings server's hashed-word vectors; every lesson embedded before the questions), so lessons may also be recalled by meaning
 * (src/lessons/by-meaning.ts): with a poor model, what that path adds must not be pollution.
 */
export async function runTeamLessons(set: LessonSet, opts: { embeddings?: boolean } = {}): Promise<TeamLessonsResult> {
  const bench = await openBenchDatabase(`learnteam_${set.name.replace(/[^a-z]/g, "")}`);
  // A real endpoint when the environment names one (as the recall bench takes it), else the fake.
  const real = process.env.CAIRN_EMBEDDINGS_URL && process.env.CAIRN_EMBEDDINGS_MODEL ? { url: process.env.CAIRN_EMBEDDINGS_URL, model: process.env.CAIRN_EMBEDDINGS_MODEL } : null;
  const vectors = opts.embeddings && !real ? await startFakeEmbeddings() : null;
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
    const endpoint = !opts.embeddings
      ? null
      : real
        ? { ...real, apiKey: process.env.CAIRN_EMBEDDINGS_API_KEY, dimensions: process.env.CAIRN_EMBEDDINGS_DIMENSIONS ? Number(process.env.CAIRN_EMBEDDINGS_DIMENSIONS) : undefined }
        : { url: vectors!.url, model: "fake-embed", dimensions: 256 };
    const embeddings = endpoint ? { embeddings: { ...endpoint, timeoutMs: 30_000, batch: 64, perMinute: 100_000 }, providerDeadlineMs: 5000 } : {};
    const core = await benchCore(bench.database, model, { bundledSkillsDir: null, ...embeddings }, () => new Date(clock));
    let seq = 0;
    const say = (text: string, channel: string) => replyText(core, channelMessage("team-ws", "UTEACH", channel, text, `team-${seq++}`, new Date(clock), false));
    const channels = [...new Set(set.cases.map((c) => c.channel ?? DEFAULT_CHANNEL))];
    for (const c of set.cases) await say(`No: ${c.lesson}`, c.channel ?? DEFAULT_CHANNEL);
    if (core.embeddings) while ((await core.embeddings.embedder.step()) === "worked");
    const present = (prompt: string) => set.cases.filter((c) => prompt.includes(c.lesson)).map((c) => c.lesson);
    const asked: { needed: string | null; seen: string[] }[] = [];
    // Unrelated questions are asked in every channel: each meets that channel's lessons.
    const questions = [
      ...set.cases.map((c) => [c.lesson, c.question, c.channel ?? DEFAULT_CHANNEL] as const),
      ...set.unrelated.flatMap((q) => channels.map((channel) => [null, q, channel] as const)),
    ];
    for (const [needed, question, channel] of questions) {
      clock += 3 * 60 * 60 * 1000; // a new session for every question
      const before = model.requests.length;
      await say(question, channel);
      asked.push({ needed, seen: present(model.requests.slice(before).map(promptText).join("\n")) });
    }
    const related = asked.filter((a) => a.needed !== null);
    const shown = asked.reduce((n, a) => n + a.seen.length, 0);
    const irrelevant = asked.reduce((n, a) => n + a.seen.filter((l) => l !== a.needed).length, 0);
    return {
      set: opts.embeddings ? `${set.name} (embeddings, ${real ? real.model : "fake vectors"})` : set.name,
      lessons: set.cases.length,
      questions: asked.length,
      lessonRecall: round((100 * related.filter((a) => a.seen.includes(a.needed!)).length) / related.length, 1),
      pollution: shown === 0 ? 0 : round((100 * irrelevant) / shown, 1),
      lessonsPerPrompt: round(shown / asked.length, 2),
      unrelatedWithLessons: asked.filter((a) => a.needed === null && a.seen.length > 0).length,
    };
  } finally {
    await vectors?.close();
    await bench.close();
  }
}
