/**
 * The weekly report on nine weeks of seeded rows (explicit dates): the numbers the test
 * computes from its own seed list, posted once through the real Slack adapter (fake Slack, Block
 * Kit with a text fallback) and once through the real Discord adapter (fake Discord, an embed),
 * never twice for a slot; an unusable model answer still gives the numbers; `/cairn report` shows
 * the stored one; reactions on the posted reports reach the core; a rich post the platform cannot
 * take goes as text parts; the console shows the Markdown. Both databases.
 */
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { z } from "zod";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest } from "../fakes/anthropic.ts";
import { BOT_TOKEN, SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { ConsoleAdapter } from "../../src/platforms/console/console.ts";
import type { RichPost } from "../../src/ground/adapter.ts";
import { silentLogger } from "../../src/ground/log.ts";
import type { Core } from "../../src/app/core.ts";
import type { ReportChannel } from "../../src/learning/settings.ts";
import { runReports } from "../../src/report/job.ts";
import { NO_REPORT_YET } from "../../src/commands/report.ts";
import { REPORT_FOOTER } from "../../src/report/render.ts";
import { expectedFigures, seedTeam, type EntrySpec, type Seeded, type TeamSpec } from "../support/report-seed.ts";

const SLOT = "2025-03-10T09:00:00.000Z";
/** The same week asked for by hand: a slot of its own (the scheduled run stored Globex's without posting it). */
const MANUAL = `manual:${SLOT}`;
const END = new Date(SLOT);
const BLOCKS = "▁▂▃▄▅▆▇█";
/** The test's sparkline: zero to the week's largest value in eight steps, "·" for no value. */
const spark = (vs: (number | null)[]) => {
  const max = Math.max(0, ...vs.filter((v): v is number => v !== null));
  return vs.map((v) => (v === null ? "·" : max === 0 ? BLOCKS[0] : BLOCKS[Math.round((v / max) * 7)])).join("");
};

/** Said in a DM: counted in the report, never quoted (not even as a repeated problem's name). */
const DM_QUESTION = "between us: can I sneak a production deploy in on Friday night?";
const INVOICE_QUESTION = "How do I export the March invoices as a CSV for accounting, with every customer's id in a column of its own?";

function acme(prefix: string, channel: string): TeamSpec {
  const E = (s: string) => `${prefix}-${s}`;
  const entries: EntrySpec[] = [
    // Team rules.
    { id: E("R1"), scope: "team", kind: "rule", text: "ALWAYS run the migration dry-run before deploying a schema change", status: "active", by: "Eve", created: 30, inForce: [30, null], fromCorrection: true },
    { id: E("R2"), scope: "team", kind: "rule", text: "NEVER page the on-call engineer for staging alerts", status: "active", by: "Cy", created: 20, inForce: [20, null], fromCorrection: true },
    { id: E("R3"), scope: "team", kind: "rule", text: "ALWAYS post release notes in the releases channel", status: "archived", by: "Dan", created: 40, revs: [["archive", 3, "Ana"]], inForce: [40, 3] },
    { id: E("R4"), scope: "team", kind: "rule", text: "NEVER deploy to production on Friday afternoons", status: "active", by: "Ana", created: 4, first: ["add", "Bo"], inForce: [4, null], fromCorrection: true },
    { id: E("R5"), scope: "team", kind: "rule", text: "ALWAYS export invoices as CSV with the customer id column", status: "active", by: "Dan", created: 2, inForce: [2, null], fromCorrection: true },
    { id: E("R6"), scope: "team", kind: "rule", text: "ALWAYS ask the release captain before a hotfix", status: "pending", by: "Eve", created: 1, first: ["propose", "Eve"], inForce: [null, null], fromCorrection: true },
    { id: E("R7"), scope: "team", kind: "rule", text: "NEVER merge without a green build on main", status: "active", by: "Ana", created: 9, first: ["propose", "Ana"], revs: [["approval", 3, "Bo"], ["approve", 3, "Bo"]], inForce: [3, null], fromCorrection: true },
    // Team facts.
    { id: E("F1"), scope: "team", kind: "fact", text: "The staging database is reset every Monday", status: "active", by: "Cy", created: 6, inForce: [6, null] },
    { id: E("F2"), scope: "team", kind: "fact", text: "Our status page lives at status.acme.example", status: "active", by: "Ana", created: 8, revs: [["confirm", 5, "Ana"]], inForce: [5, null] },
    { id: E("F3"), scope: "team", kind: "fact", text: "The team's main language is TypeScript", status: "active", by: "Bo", created: 50, inForce: [50, null] },
    { id: E("F4"), scope: "team", kind: "fact", text: "Standup is at half past nine", status: "archived", by: "Bo", created: 12, revs: [["remove", 6, "Bo"]], inForce: [12, 6] },
    // Channel lessons: two topics this week (Friday deploys, invoice exports) and one on its own.
    // The Friday topic is named by its latest channel question; the DM one (L5's) is never quoted.
    { id: E("L1"), scope: "channel", kind: "lesson", text: "NEVER deploy to production on Friday afternoons", status: "archived", by: "Ana", created: 5, revs: [["approval", 4, "Bo"], ["promote", 4, "Bo"]], inForce: [5, 4], fromCorrection: true, asked: { reply: 2, text: "Can we ship the billing service to production this Friday afternoon?" } },
    { id: E("L2"), scope: "channel", kind: "lesson", text: "ALWAYS export invoices as CSV with the customer id column", status: "archived", by: "Cy", created: 10, revs: [["promote", 2, "Dan"]], inForce: [10, 2], fromCorrection: true },
    { id: E("L3"), scope: "channel", kind: "lesson", text: "ALWAYS export invoices as CSV with the customer id column", status: "archived", by: "Dan", created: 2.1, revs: [["promote", 2, "Dan"]], inForce: [2.1, 2], fromCorrection: true, asked: { reply: 6, text: INVOICE_QUESTION } },
    { id: E("L4"), scope: "channel", kind: "lesson", text: "ALWAYS check with #ops before a Friday production deploy", status: "active", by: "Bo", created: 3, inForce: [3, null], fromCorrection: true, asked: { reply: 4, text: "Is it OK to deploy to production on a Friday?" } },
    { id: E("L5"), scope: "channel", kind: "lesson", text: "NEVER start a production deploy on Friday without the release captain", status: "active", by: "Cy", created: 1, inForce: [1, null], fromCorrection: true, asked: { turn: 0 } },
    { id: E("L6"), scope: "channel", kind: "lesson", text: "ALWAYS include the customer id when exporting invoices", status: "active", by: "Eve", created: 1.5, inForce: [1.5, null], fromCorrection: true },
    { id: E("L7"), scope: "channel", kind: "lesson", text: "ALWAYS link the Jira ticket in commit messages", status: "active", by: "Ana", created: 0.5, inForce: [0.5, null], fromCorrection: true },
    { id: E("C1"), scope: "channel", kind: "fact", text: "This channel is for backend questions", status: "active", by: "Bo", created: 20, inForce: [20, null] },
    { id: E("C2"), scope: "channel", kind: "fact", text: "The sprint ends on Thursday", status: "archived", by: "Bo", created: 15, revs: [["remove", 8, "Bo"]], inForce: [15, 8] },
    // Private: a DM lesson (about Friday deploys too, never grouped or shown) and profile facts.
    { id: E("P1"), scope: "user", kind: "lesson", text: "NEVER deploy on Friday", status: "active", by: "Ana", created: 2, inForce: [2, null], fromCorrection: true },
    { id: E("U1"), scope: "user", kind: "fact", text: "Ana prefers bullet points", status: "active", by: "Ana", created: 30, inForce: [30, null] },
    { id: E("U2"), scope: "user", kind: "fact", text: "Ana works from Lisbon", status: "active", by: "Ana", created: 3, inForce: [3, null] },
    { id: E("U3"), scope: "user", kind: "fact", text: "Ana is on call this week", status: "pending", by: "Ana", created: 1, inForce: [null, null] },
  ];
  return {
    platform: "slack",
    externalId: uniqueId("T"),
    name: "Acme",
    channel,
    replies: [12, 10, 9, 11, 8, 0, 7, 6, 5],
    corrections: [4, 3, 1, 2, 0, 0, 2, 1, 4],
    traces: [
      { week: 0, index: 0, skills: ["deploy-checklist", "deploy-checklist"], shown: [E("R1"), E("R2")] },
      { week: 0, index: 1, skills: ["deploy-checklist"], shown: [E("R1")] },
      { week: 0, index: 2, skills: ["deploy-checklist"] },
      { week: 0, index: 3, skills: ["deploy-checklist"], shown: [E("L4")], correction: "asked" },
      { week: 0, index: 4, skills: ["deploy-checklist"] },
      { week: 0, index: 5, skills: ["incident-notes"], shown: [E("R1")] },
      { week: 0, index: 6, skills: ["incident-notes"] },
      { week: 0, index: 7, skills: ["incident-notes"] },
      { week: 0, index: 8, skills: ["deploy-checklist", "incident-notes"] },
      { week: 1, index: 0, skills: ["release-notes"], shown: [E("R1")] },
      { week: 1, index: 1, skills: ["release-notes"], shown: [E("R1")] },
    ],
    entries,
    turns: [
      { who: "Cy", where: "dm", question: DM_QUESTION, days: 1.2, reply: "model" },
      { who: "Dan", where: "thread", question: "Where do the staging credentials live?", days: 2.5, reply: "model" },
      { who: "Eve", where: "thread", question: "Who is on call tonight?", days: 0.7, reply: "none" },
    ],
    skills: [
      { name: "deploy-checklist", created: 60, useCount: 20, revs: [["patch", 2], ["edit", 1]] },
      { name: "incident-notes", created: 3, useCount: 4, revs: [["create", 3]] },
      { name: "old-runbook", created: 40, useCount: 0, revs: [["write_file", 5]] },
      { name: "vendor-contacts", created: 20, useCount: 0, revs: [["patch", 10]] },
      { name: "fresh-skill", created: 1, useCount: 0 },
      { name: "archived-thing", created: 30, useCount: 0, status: "archived" },
    ],
  };
}

function globex(guild: string, channel: string): TeamSpec {
  return {
    platform: "discord",
    externalId: guild,
    name: "Globex",
    channel,
    replies: [3, 2],
    corrections: [1, 0],
    traces: [],
    entries: [{ id: uniqueId("G-F1"), scope: "team", kind: "fact", text: "Deploys go through the release train", status: "active", by: "Ana", created: 2, inForce: [2, null] }],
    skills: [],
  };
}

/** Block Kit as the fake Slack stored it. */
const Blocks = z.array(
  z.looseObject({
    type: z.string(),
    text: z.looseObject({ type: z.string(), text: z.string() }).optional(),
    // A context's texts, or an actions block's buttons (their text an object, their value a command line).
    elements: z.array(z.looseObject({ type: z.string(), text: z.union([z.string(), z.looseObject({ text: z.string() })]), value: z.string().optional() })).optional(),
  }),
);

const isReport = (r: RecordedRequest) => systemText(r).startsWith("You write the short weekly report");
const userText = (r: RecordedRequest) => JSON.stringify(r.body.messages);

interface StoredData {
  metrics: {
    weeks: { replies: number; corrections: number; per100: number | null }[];
    correctionsLearned: number;
    lessons: unknown;
    rules: unknown;
    skills: unknown;
    memory: unknown;
  };
  usage: unknown;
  repeated: { byWords: { question: string | null; words: string[]; lessons: number; people: string[] }[]; byRule: { ruleId: string; corrections: number }[] };
  learned: { id: string; taughtBy: string | null; approvedBy: string | null }[];
  narrative: unknown;
}

forEachDatabase("weekly report", (getDb) => {
  let fake: FakeAnthropic;
  let slack: FakeSlack;
  let slackHandle: SlackHandle;
  let discord: FakeDiscord;
  let discordAdapter: DiscordAdapter;
  let slackCore: Core;
  let discordCore: Core;
  const prefix = uniqueId("e");
  const slackChannel = `C${randomBytes(4).toString("hex").toUpperCase()}`;
  const guild = snowflake();
  const discordChannel = snowflake();
  const dora: FakeUser = { id: snowflake(), username: "dora", globalName: "Dora" };
  const A = acme(prefix, slackChannel);
  const B = globex(guild, discordChannel);
  let a: Seeded;
  let b: Seeded;

  const core = (reportChannel: ReportChannel) => makeCore(getDb(), fake, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reportChannel } });
  const report = (workspaceId: string, slot = SLOT) => getDb().prisma.report.findUniqueOrThrow({ where: { workspaceId_slot: { workspaceId, slot } } });
  const botPostsIn = (channel: string) => slack.messages(channel).filter((m) => m.bot_id || m.user === slack.bot.userId);

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    slack = await startFakeSlack();
    discord = await startFakeDiscord({ guilds: [{ id: guild, name: "Globex", channels: [{ id: discordChannel, name: "general" }], members: [dora] }] });
    slackCore = core({ platform: "slack", channel: slackChannel });
    discordCore = core({ platform: "discord", channel: discordChannel });
    slackHandle = await startSlack(
      slackCore,
      { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl, port: 0, host: "127.0.0.1", retries: 1, retryMinMs: 10, progressIntervalMs: 50, drainMs: 5_000 },
      silentLogger,
    );
    discordAdapter = await startDiscord(discordCore, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { shutdownGraceMs: 5_000 });
    a = await seedTeam(getDb().prisma, END, A);
    b = await seedTeam(getDb().prisma, END, B);
  });
  afterAll(async () => {
    await slackHandle?.stop();
    await discordAdapter?.stop();
    await slack?.close();
    await discord?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
    // The model writes Acme's review well, and answers Globex's with prose that is not the JSON asked for.
    fake.setDefault((req) => {
      if (!isReport(req)) return { text: "ok" };
      if (!userText(req).includes(`${prefix}-R1`)) return { text: "What a week! Corrections went down 40% and 12 lessons were learned." };
      return {
        text: JSON.stringify({
          narrative: "A busier week, with more corrections than last week, mostly about Friday deploys and invoice exports. Two of them became team rules.",
          learned: [
            { id: `${prefix}-R4`, summary: "cairn no longer deploys to production on Friday afternoons." },
            { id: `${prefix}-F1`, summary: "The staging database is reset every 7 days." },
          ],
          proposals: [
            { kind: "prune", rule_ids: [`${prefix}-R1`], reason: "It was followed in several answers people corrected this week." },
            { kind: "conflict", rule_ids: ["no-such-rule", `${prefix}-R2`], reason: "They disagree." },
          ],
        }),
      };
    });
  });

  it("computes the week's numbers from the rows, posts the review once to Slack, and not again for the same slot", async () => {
    await slackCore.jobs.enqueue("report", { slot: SLOT }, { uniqueKey: `test-report:${SLOT}:slack` });
    await slackCore.learning.drain();
    const [job] = await slackCore.jobs.list("report");
    expect(job?.status).toBe("done");

    const row = await report(a.workspaceId);
    expect(row.periodStart.toISOString()).toBe("2025-03-03T09:00:00.000Z");
    expect(row.periodEnd.toISOString()).toBe(SLOT);
    const data = JSON.parse(row.data) as StoredData;
    const want = expectedFigures(A);
    expect(data.metrics.weeks.map((w) => ({ replies: w.replies, corrections: w.corrections, per100: w.per100 }))).toEqual(want.weeks);
    expect(data.metrics.correctionsLearned).toBe(want.correctionsLearned);
    expect(data.metrics.lessons).toEqual(want.lessons);
    expect(data.metrics.rules).toEqual(want.rules);
    expect(data.metrics.skills).toEqual(want.skills);
    expect(data.metrics.memory).toEqual(want.memory);
    // The seed's own reading, spelled out: 7 proposals (6 channel lessons, 1 pending rule), 2 approved, 3 lessons promoted.
    expect(want.lessons).toEqual({ proposed: 7, approved: 2, promoted: 3, private: 1 });
    expect(want.memory).toEqual({ user: { start: 1, end: 3 }, channel: { start: 2, end: 5 }, team: { start: 5, end: 8 } });

    // Repeated problems: Friday deploys (three people), invoice exports (two), and a rule in front of two corrected answers.
    expect(data.repeated.byWords.map((t) => ({ lessons: t.lessons, people: t.people }))).toEqual([
      { lessons: 3, people: ["Ana", "Bo", "Cy"] },
      { lessons: 2, people: ["Dan", "Eve"] },
    ]);
    expect(data.repeated.byWords[0]!.words).toEqual(expect.arrayContaining(["deploy", "friday"]));
    expect(data.repeated.byWords[1]!.words).toEqual(expect.arrayContaining(["customer"]));
    // Each named by a question people asked in the channel: of two alike, the latest; a long one cut at 80 characters.
    expect(data.repeated.byWords.map((t) => t.question)).toEqual(["Is it OK to deploy to production on a Friday?", "How do I export the March invoices as a CSV for accounting, with every…"]);

    // Who used cairn: Ana, and Cy, Dan and Eve in turns of their own (Cy's a DM); three failed replies, two of them the model's.
    expect(data.usage).toMatchObject(want.usage);
    expect(want.usage).toMatchObject({ people: 4, conversations: 4, answered: 12, unanswered: 3, modelFailures: 2, tokens: null });
    expect(data.repeated.byRule).toEqual([{ ruleId: `${prefix}-R1`, text: A.entries[0]!.text, corrections: 2 }]);

    // What cairn learned: team entries in force since this week, with who taught and who approved them.
    expect(data.learned.map((l) => l.id)).toEqual(want.learned.map((e) => e.id));
    expect(data.learned.map((l) => [l.taughtBy, l.approvedBy])).toEqual([
      ["Cy", null],
      ["Ana", null],
      ["Ana", "Bo"],
      ["Ana", "Bo"],
      ["Dan", null],
    ]);

    // The message: numbers by code, sparklines, the model's sentences where they passed the checks.
    const text = row.text;
    const [thisWeek, lastWeek] = [want.weeks[7]!, want.weeks[6]!];
    expect(text).toContain("- People who talked to cairn: **4** · conversations: **4**");
    expect(text).toContain(`- Questions answered: **${thisWeek.replies}** (last week ${lastWeek.replies}) · 8 weeks ${spark(want.weeks.map((w) => w.replies))}`);
    expect(text).toContain("- Questions cairn couldn't answer: **3** (it apologised instead: 2 because its AI model could not be reached or stopped mid-answer; 1 for another reason, such as the hourly message limit or a post the platform refused)");
    expect(text).toContain("- AI model failures: **2**");
    // No token record yet: no token line rather than a made-up one.
    expect(text).not.toContain("tokens");
    expect(text).toContain(`Corrections per 100 answers, 8 weeks: ${spark(want.weeks.map((w) => w.per100))}`);
    expect(text).toContain(`Answers people corrected: **${thisWeek.corrections}**, ${thisWeek.per100!.toFixed(1)} per 100 answers`);
    expect(text).toContain('- "Is it OK to deploy to production on a Friday?" needed correcting 3 times (Ana, Bo, Cy)');
    expect(text).toContain(`- The team rule "${A.entries[0]!.text}" was among the rules cairn followed in 2 answers people corrected: admins can keep it (\`/cairn keep ${prefix}-R1\`)`);
    // A DM's words appear nowhere: not its question, not as a topic's name.
    expect(text).not.toContain("sneak");
    expect(row.data).not.toContain("sneak");
    // Plain words: none of the old jargon.
    for (const jargon of ["in force", "in front of", "superseded", "Replies:"]) expect(text).not.toContain(jargon);
    expect(text).toContain("A busier week, with more corrections than last week");
    expect(text).toContain("cairn no longer deploys to production on Friday afternoons. _(team rule, taught by Ana, approved by Bo)_");
    // A summary with a number its rule does not have is dropped: the rule's own text stands.
    expect(text).not.toContain("every 7 days");
    expect(text).toContain("The staging database is reset every Monday _(fact, taught by Cy)_");
    // Every suggestion with its command (and a button, below).
    expect(text).toContain(`- Retire the team rule "${A.entries[0]!.text}": It was followed in several answers people corrected this week. · admins: \`/cairn forget ${prefix}-R1\``);
    expect(text).not.toContain("disagree:");
    // Private lessons are counted, never shown.
    expect(text).not.toContain("NEVER deploy on Friday");

    // One post to the report channel: Block Kit, with the whole message as mrkdwn for its fallback text.
    const posts = botPostsIn(slackChannel);
    expect(posts).toHaveLength(1);
    const post = posts[0]!;
    expect(post.text).toContain("*Who used cairn*");
    expect(post.text).toContain(spark(want.weeks.map((w) => w.per100)));
    const blocks = Blocks.parse(post.blocks);
    expect(blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: "cairn's weekly report for Acme, 2025-03-03 to 2025-03-10", emoji: true } });
    const sections = blocks.filter((b) => b.type === "section").map((b) => b.text!);
    expect(sections.every((t) => t.type === "mrkdwn")).toBe(true);
    expect(sections.map((t) => t.text.split("\n")[0])).toEqual([
      "A busier week, with more corrections than last week, mostly about Friday deploys and invoice exports. Two of them became team rules.",
      "*Who used cairn (private messages counted, never quoted)*",
      "*Corrections and what cairn remembers*",
      "*Repeated problems (the same kind of question corrected more than once this week)*",
      "*What cairn learned this week*",
      // The pending team rule R6, a day old at the week's end, with its buttons (report-loop.test.ts tests the rest of the loop).
      "*Waiting for approval (1 in all, the oldest 1 day; a button runs the command as whoever clicks it)*",
      "*Suggestions (cairn's suggestions; a person decides)*",
    ]);
    expect(sections[1]!.text).toContain(`• Questions answered: *${thisWeek.replies}* (last week ${lastWeek.replies}) · 8 weeks ${spark(want.weeks.map((w) => w.replies))}`);
    expect(sections[2]!.text).toContain(`• Corrections per 100 answers, 8 weeks: ${spark(want.weeks.map((w) => w.per100))}`);
    expect(sections[4]!.text).toContain("cairn no longer deploys to production on Friday afternoons. _(team rule, taught by Ana, approved by Bo)_");
    // A divider between sections, the footer as context last.
    expect(blocks.map((b) => b.type)).toEqual(["header", "section", "divider", "section", "divider", "section", "divider", "section", "divider", "section", "divider", "section", "actions", "divider", "section", "actions", "context"]);
    expect(blocks.filter((b) => b.type === "actions").map((b) => b.elements!.map((e) => e.value))).toEqual([[`approve ${prefix}-R6`, `reject ${prefix}-R6`], [`forget ${prefix}-R1`]]);
    expect(blocks.at(-1)!.elements).toEqual([{ type: "plain_text", text: REPORT_FOOTER, emoji: true }]);
    // The one message is recorded as the delivery of the stored post, whose text is the report's Markdown.
    const delivery = await getDb().prisma.delivery.findFirstOrThrow({ where: { platformId: post.ts, channelId: slackChannel } });
    expect((await getDb().prisma.message.findUniqueOrThrow({ where: { id: delivery.messageId } })).text).toBe(row.text);

    // The same slot again (a retry, or queued twice): nothing more is stored or posted.
    await slackCore.jobs.enqueue("report", { slot: SLOT }, { uniqueKey: `test-report:${SLOT}:slack:again` });
    await slackCore.learning.drain();
    expect(await runReports({ ...slackCore.learning.ctx, reports: slackCore.reports }, { slot: SLOT })).toMatch(/^0 reports stored, \d+ already made/);
    expect(botPostsIn(slackChannel)).toHaveLength(1);
    expect(await getDb().prisma.report.count({ where: { workspaceId: a.workspaceId } })).toBe(1);
  });

  it("posts the numbers and the learned list to Discord when the model's answer is unusable", async () => {
    // A Discord DM is one person's pseudo-workspace: no report of its own.
    const dm = await seedTeam(getDb().prisma, END, { ...globex(`@dm:${dora.id}`, snowflake()), name: "DM" });
    const summary = await runReports({ ...discordCore.learning.ctx, reports: discordCore.reports }, { slot: MANUAL, requestedBy: "discord:dora" });
    expect(summary).toContain(`posted to discord:${discordChannel}`);
    expect(fake.requests.filter(isReport).length).toBeGreaterThan(0);
    const row = await report(b.workspaceId, MANUAL);
    expect(row.periodEnd.toISOString()).toBe(SLOT);
    expect(await getDb().prisma.report.count({ where: { workspaceId: dm.workspaceId } })).toBe(0);
    const data = JSON.parse(row.data) as StoredData;
    const want = expectedFigures(B);
    expect(data.narrative).toBeNull();
    expect(data.metrics.weeks.map((w) => ({ replies: w.replies, corrections: w.corrections, per100: w.per100 }))).toEqual(want.weeks);
    expect(row.text).toContain("Questions answered: **3** (last week 2)");
    expect(row.text).toContain("Answers people corrected: **1**, 33.3 per 100 answers");
    expect(row.text).toContain("- People who talked to cairn: **1** · conversations: **1**");
    expect(row.text).toContain("- Questions cairn couldn't answer: **1** (it apologised instead: 1 for another reason, such as the hourly message limit or a post the platform refused)\n- AI model failures: **0**");
    expect(row.text).toContain("- Deploys go through the release train _(fact, taught by Ana)_");
    // Nothing of the model's prose, and none of its numbers.
    expect(row.text).not.toContain("40%");
    expect(row.text).not.toContain("Proposals");

    // One message with one embed: the title, the sections as fields, the footer; nothing can ping.
    const posted = await waitFor(() => discord.posts.find((p) => p.channelId === discordChannel), "the report on Discord");
    expect(posted.content).toBe("");
    expect(posted.allowedMentions).toMatchObject({ parse: [] });
    expect(posted.embeds).toHaveLength(1);
    const embed = posted.embeds[0]!;
    expect(embed.title).toBe("cairn's weekly report for Globex, 2025-03-03 to 2025-03-10");
    // No narrative: nothing opens the embed before the numbers.
    expect(embed.description).toBeUndefined();
    expect(embed.fields?.map((f) => f.name)).toEqual(["Who used cairn (private messages counted, never quoted)", "Corrections and what cairn remembers", "What cairn learned this week"]);
    expect(embed.fields![0]!.value).toContain(`- Questions answered: **3** (last week 2) · 8 weeks ${spark(want.weeks.map((w) => w.replies))}`);
    expect(embed.fields![1]!.value).toContain("Answers people corrected: **1**, 33.3 per 100 answers");
    expect(embed.fields![2]!.value).toBe("- Deploys go through the release train _(fact, taught by Ana)_");
    expect(embed.footer?.text).toBe(REPORT_FOOTER);
    const delivery = await getDb().prisma.delivery.findFirstOrThrow({ where: { platformId: posted.id, channelId: discordChannel } });
    expect((await getDb().prisma.message.findUniqueOrThrow({ where: { id: delivery.messageId } })).text).toBe(row.text);
    // Acme's report went to Slack only; a second Discord run posts nothing more.
    expect(await runReports({ ...discordCore.learning.ctx, reports: discordCore.reports }, { slot: MANUAL })).toMatch(/^0 reports stored/);
    expect(discord.posts.filter((p) => p.channelId === discordChannel && p.via === "channel")).toHaveLength(1);
    expect(botPostsIn(slackChannel)).toHaveLength(1);
  });

  it("shows the stored report with /cairn report, to the asker alone", async () => {
    const inbound = (workspace: string) => ({
      platform: "slack" as const,
      workspace: { externalId: workspace },
      author: { externalId: "UASKER", displayName: "Asker" },
      channel: { externalId: slackChannel, isDm: false },
      threadId: null,
      messageId: uniqueId("m"),
      text: "/cairn report",
      sentAt: new Date(),
    });
    const shown = await slackCore.command(inbound(A.externalId), "report");
    expect(shown).toEqual({ text: (await report(a.workspaceId)).text, ephemeral: true });
    expect(await slackCore.command(inbound(uniqueId("T")), "report")).toEqual({ text: NO_REPORT_YET, ephemeral: true });

    // On Discord, the slash command's subcommand.
    const id = discord.sendCommand({ user: dora, channelId: discordChannel, subcommand: "report" });
    const answer = await waitFor(() => discord.posts.find((p) => p.interactionId === id), "the /cairn report answer");
    expect(answer.flags & 64).toBe(64);
    expect(answer.content).toContain("cairn's weekly report");
    expect(answer.content).toContain("Questions answered: **3** (last week 2)");
  });
  it("takes a 👎 on the Slack report and a ✅ on the Discord one as reactions on cairn's posts", async () => {
    const db = getDb().prisma;
    const feedbackOn = async (core: Core, messageId: number) =>
      (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as { replyMessageId: number; emoji: string; action: string }).find((p) => p.replyMessageId === messageId);

    const slackPost = botPostsIn(slackChannel)[0]!;
    const slackDelivery = await db.delivery.findFirstOrThrow({ where: { platformId: slackPost.ts, channelId: slackChannel } });
    const reaction = { type: "reaction_added", user: "UREADER", reaction: "-1", item_user: slack.bot.userId, item: { type: "message", channel: slackChannel, ts: slackPost.ts }, event_ts: slack.nextTs() };
    expect((await postSigned(`http://127.0.0.1:${slackHandle.port}/slack/events`, eventCallback(A.externalId, reaction))).status).toBe(200);
    // Slack's "-1" reaches the core as the character.
    expect(await waitFor(() => feedbackOn(slackCore, slackDelivery.messageId), "the 👎 on the Slack report")).toMatchObject({ emoji: "👎", action: "added" });

    const discordPost = discord.posts.find((p) => p.channelId === discordChannel && p.via === "channel")!;
    const discordDelivery = await db.delivery.findFirstOrThrow({ where: { platformId: discordPost.id, channelId: discordChannel } });
    discord.react({ channelId: discordChannel, messageId: discordPost.id, user: dora, emoji: "✅" });
    expect(await waitFor(() => feedbackOn(discordCore, discordDelivery.messageId), "the ✅ on the Discord report")).toMatchObject({ emoji: "✅", action: "added" });
  });

  it("posts a rich post the platform cannot take as text parts, each recorded as a delivery; mass mentions stay inert in blocks", async () => {
    const db = getDb().prisma;
    const slackAt = { kind: "channel" as const, workspace: A.externalId, channel: slackChannel };
    const discordAt = { kind: "channel" as const, workspace: guild, channel: discordChannel };
    const partsOf = async (messageId: number) => (await db.delivery.findMany({ where: { messageId }, orderBy: { id: "asc" } })).map((d) => d.platformId);

    // A small one with mass mentions: one message of blocks, the mentions escaped as in any text.
    const loud: RichPost = { title: "<!channel> heads up", sections: [{ heading: "<!here>", markdown: "ping <!everyone> and <!subteam^S1>" }] };
    const small = await slackCore.post("slack", slackAt, "<!channel> heads up: ping <!everyone>", loud);
    const [shown] = botPostsIn(slackChannel).filter((m) => m.ts === small.posted[0]);
    expect(small.posted).toHaveLength(1);
    const loudBlocks = Blocks.parse(shown!.blocks);
    expect(loudBlocks[1]!.text!.text).toBe("*&lt;!here&gt;*\nping &lt;!everyone&gt; and &lt;!subteam^S1&gt;");
    expect(shown!.text).toBe("&lt;!channel&gt; heads up: ping &lt;!everyone&gt;");

    // Too big: 60 blocks for Slack, over 6,000 characters for a Discord embed.
    const big: RichPost = { title: "Too big", sections: Array.from({ length: 30 }, (_, i) => ({ heading: `Part ${i}`, markdown: `- line ${i}: ${"x".repeat(200)}` })) };
    const markdown = big.sections.map((x) => `**${x.heading}**\n${x.markdown}`).join("\n\n");
    const onSlack = await slackCore.post("slack", slackAt, markdown, big);
    expect(onSlack.posted.length).toBeGreaterThan(1);
    const slackParts = botPostsIn(slackChannel).filter((m) => onSlack.posted.includes(m.ts));
    expect(slackParts).toHaveLength(onSlack.posted.length);
    expect(slackParts.every((m) => m.blocks === undefined)).toBe(true);
    expect(slackParts[0]!.text).toContain("*Part 0*");
    expect(await partsOf(onSlack.messageId)).toEqual(onSlack.posted);

    const onDiscord = await discordCore.post("discord", discordAt, markdown, big);
    expect(onDiscord.posted.length).toBeGreaterThan(1);
    const discordParts = discord.posts.filter((p) => onDiscord.posted.includes(p.id));
    expect(discordParts.map((p) => p.embeds.length)).toEqual(onDiscord.posted.map(() => 0));
    expect(discordParts[0]!.content).toContain("**Part 0**");
    expect(await partsOf(onDiscord.messageId)).toEqual(onDiscord.posted);

    // Slack refuses the blocks: the same post goes as text.
    slack.failNext("chat.postMessage", "invalid_blocks", 1, (a) => a.blocks !== undefined);
    const refused = await slackCore.post("slack", slackAt, "**Fine** as text", { title: "Fine", sections: [{ markdown: "as blocks" }] });
    expect(refused).toMatchObject({ failed: false });
    expect(botPostsIn(slackChannel).filter((m) => refused.posted.includes(m.ts)).map((m) => [m.text, m.blocks])).toEqual([["*Fine* as text", undefined]]);
    expect(await partsOf(refused.messageId)).toEqual(refused.posted);
  });

  it("shows the console the report's Markdown, as without a rich form", async () => {
    const output = new PassThrough();
    let printed = "";
    output.on("data", (d: Buffer) => (printed += d.toString()));
    const consoleCore = core({ platform: "console", channel: "console" });
    const adapter = new ConsoleAdapter({ input: new PassThrough(), output, user: "ana", prompt: false, color: false });
    consoleCore.attach(adapter);
    const team = await seedTeam(getDb().prisma, END, { ...globex(uniqueId("local"), "console"), platform: "console", name: "Local" });
    expect(await runReports({ ...consoleCore.learning.ctx, reports: consoleCore.reports }, { slot: MANUAL })).toContain("posted to console");
    const row = await report(team.workspaceId, MANUAL);
    expect(printed).toBe(`cairn> ${adapter.render(row.text)}\n`);
  });
});
