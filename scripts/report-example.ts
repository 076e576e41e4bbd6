/**
 * `npx tsx scripts/report-example.ts`: the weekly report of a made-up team's week, as it would
 * be posted to Slack. A temporary SQLite database is seeded with nine weeks of rows (five people,
 * corrections, lessons, a rule approved with ✅, a rule promoted by a repeated correction, skills
 * read), the `report` job runs through the job worker with a fake model (no keys, no network), and
 * the message posted to the report channel is printed twice: its Block Kit blocks (built by the
 * Slack adapter's own builder, src/platforms/slack/replies/rich.ts) drawn as text, as a person sees them in
 * Slack, and its fallback text in Slack mrkdwn (notifications, clients without blocks).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { openDatabase } from "../src/db/client.ts";
import type { Db } from "../src/db/client.ts";
import { Core } from "../src/app/core.ts";
import { silentLogger } from "../src/ground/log.ts";
import { MODEL_UNAVAILABLE_REPLY } from "../src/ground/replies.ts";
import type { PostTarget, ReplyTarget } from "../src/ground/adapter.ts";
import type { SlackBlock } from "../src/platforms/slack/client.ts";
import { richMessage, type SlackRichMessage } from "../src/platforms/slack/replies/rich.ts";
import { benchSettings } from "../bench/lib/core.ts";
import { fakeModel, lastUserText, type Reply } from "../bench/lib/model.ts";
import { MemoryPlatform } from "../bench/lib/memory-platform.ts";

const SLOT = "2025-06-16T09:00:00.000Z";
const END = new Date(SLOT);
const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(END.getTime() - days * DAY);
const REPORTS = "C0REPORTS";
const PEOPLE = ["Ana", "Bo", "Cy", "Dan", "Eve"] as const;
type Who = (typeof PEOPLE)[number];

/** How the (fake) model words what was learned; it is shown the texts and ids, and answers JSON. */
const SUMMARIES: Record<string, string> = {
  "ALWAYS run `pnpm db:migrate --dry-run` before applying a migration in production": "Before any production migration, cairn has you run `pnpm db:migrate --dry-run` first.",
  "NEVER suggest restarting the payments worker before the on-call engineer has been paged": "cairn won't suggest restarting the payments worker until the on-call engineer has been paged.",
  "The Q3 planning doc lives in Notion under Engineering/Planning": "The Q3 planning doc is in Notion, under Engineering/Planning.",
};

const ReportInput = (text: string) =>
  JSON.parse(text) as { learned: { id: string; text: string }[]; team_rules: { id: string; text: string }[]; repeated_problems: { byRule: { ruleId: string }[] } };

function respond(req: Anthropic.MessageCreateParamsNonStreaming): Reply {
  const input = ReportInput(lastUserText(req));
  const squash = input.team_rules.filter((r) => /squash/i.test(r.text)).map((r) => r.id);
  const noisy = input.repeated_problems.byRule[0]?.ruleId;
  return {
    text: JSON.stringify({
      narrative:
        "A steadier week: more questions than last week and fewer corrections per reply. Production migrations came up twice, from Ana and Cy, and are now a team rule. The release-tagging rule keeps showing up in answers people corrected; it may need rewording or pruning.",
      learned: input.learned.flatMap((l) => (SUMMARIES[l.text] ? [{ id: l.id, summary: SUMMARIES[l.text] }] : [])),
      proposals: [
        ...(noisy ? [{ kind: "prune", rule_ids: [noisy], reason: "It was followed in answers people corrected more than once this week." }] : []),
        ...(squash.length === 2 ? [{ kind: "conflict", rule_ids: squash, reason: "One says to squash every pull request, the other never to squash on release branches." }] : []),
      ],
    }),
  };
}

async function seed(db: Db): Promise<void> {
  const ws = await db.workspace.create({ data: { platform: "slack", externalId: "T0NORTHWIND", name: "Northwind", createdAt: ago(90) } });
  const id = {} as Record<Who, string>;
  for (const n of PEOPLE) id[n] = (await db.person.create({ data: { workspaceId: ws.id, externalId: `U0${n.toUpperCase()}`, displayName: n } })).id;
  const channel = async (c: string) => db.conversation.create({ data: { workspaceId: ws.id, key: `slack:T0NORTHWIND:${c}:main`, channelId: c, isDm: false, createdAt: ago(90) } });
  const [backend, ops] = [await channel("C0BACKEND"), await channel("C0OPS")];
  await channel(REPORTS);
  // What the week's model calls used, as the usage ledger keeps it (ops/usage-ledger.ts): by hour,
  // model and purpose. The answers on Sonnet, summaries and reviews on Haiku.
  const hour = (days: number) => ago(days).toISOString().slice(0, 13);
  await db.modelUsage.createMany({
    data: [
      { workspaceId: ws.id, hour: hour(5), model: "claude-sonnet-5", purpose: "turn", calls: 30, inputTokens: 96_000, outputTokens: 21_500, cacheReadTokens: 410_000, cacheWriteTokens: 38_000 },
      { workspaceId: ws.id, hour: hour(2), model: "claude-sonnet-5", purpose: "turn", calls: 18, failures: 2, inputTokens: 61_000, outputTokens: 13_200, cacheReadTokens: 250_000, cacheWriteTokens: 22_000 },
      { workspaceId: ws.id, hour: hour(3), model: "claude-haiku-4-5", purpose: "review", calls: 9, inputTokens: 12_000, outputTokens: 2_100, cacheReadTokens: 88_000, cacheWriteTokens: 0 },
    ],
  });
  const revise = (entityId: string, action: string, days: number, who: Who | null, entityType = "memory") =>
    db.revision.create({ data: { workspaceId: ws.id, entityType, entityId, action, actorId: who ? id[who] : null, source: "reaction", createdAt: ago(days) } });

  // Nine weeks of answers (more each week) and corrections (fewer per answer), this week first.
  const replies = [46, 41, 38, 44, 35, 29, 33, 27, 22];
  const corrections = [5, 6, 5, 7, 6, 6, 7, 6, 5];
  const skillsRead = (i: number) => (i < 14 ? ["deploy-checklist"] : i < 20 ? ["incident-report"] : i < 23 ? ["sql-style"] : []);
  const correctors: Who[] = ["Ana", "Cy", "Dan", "Bo", "Eve", "Ana", "Cy"];
  const tagRule = "rule-release-tags";
  /** This week's replies by index: a lesson's case names the reply it corrected. */
  const thisWeek: { question: number; reply: number }[] = [];
  for (let week = 0; week < replies.length; week++) {
    for (let i = 0; i < replies[week]!; i++) {
      const t = new Date(END.getTime() - (week + 1) * 7 * DAY + i * 3.5 * 60 * 60 * 1000);
      const conv = i % 3 === 0 ? ops : backend;
      const q = await db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role: "user", text: "a question", status: "answered", authorId: id[PEOPLE[i % 5]!], createdAt: t } });
      const r = await db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role: "assistant", text: "an answer", status: "sent", replyToId: q.id, createdAt: t } });
      if (week === 0) thisWeek[i] = { question: q.id, reply: r.id };
      const corrected = i < corrections[week]!;
      const shown = week === 0 && (i === 1 || i === 3) ? [tagRule] : [];
      await db.replyTrace.create({ data: { messageId: r.id, workspaceId: ws.id, conversationId: conv.id, skills: JSON.stringify(week === 0 ? skillsRead(i + 5) : []), lessons: JSON.stringify(shown), createdAt: t } });
      if (corrected) await db.correction.create({ data: { workspaceId: ws.id, conversationId: conv.id, replyMessageId: r.id, reactorId: id[correctors[i]!], status: "learned", createdAt: t } });
    }
  }

  // Two turns this week that got an apology instead of an answer: the model was unreachable (one in a DM).
  for (const [who, dm, days] of [["Eve", true, 2.5], ["Dan", false, 1.2]] as const) {
    const conv = await db.conversation.create({ data: { workspaceId: ws.id, key: `slack:T0NORTHWIND:${dm ? `D0${who.toUpperCase()}` : "C0OPS:t1"}`, channelId: dm ? `D0${who.toUpperCase()}` : "C0OPS", threadId: dm ? null : "t1", isDm: dm, ownerId: dm ? id[who] : null, createdAt: ago(days) } });
    const q = await db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role: "user", text: "a question", status: "failed", authorId: id[who], createdAt: ago(days) } });
    await db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role: "assistant", text: MODEL_UNAVAILABLE_REPLY, status: "failed", replyToId: q.id, createdAt: ago(days) } });
  }

  /** `asked`: the question of this week's reply `reply` the lesson corrected, as it was asked. */
  const entry = async (e: { id: string; scope: string; kind: string; text: string; by: Who; days: number; status?: string; channel?: string; fromCorrection?: boolean; asked?: { reply: number; text: string } }) => {
    const corrected = e.asked ? thisWeek[e.asked.reply]! : null;
    if (e.asked && corrected) await db.message.update({ where: { id: corrected.question }, data: { text: e.asked.text } });
    const origin = e.fromCorrection
      ? JSON.stringify({ question: e.asked?.text ?? null, wrongAnswer: "…", correction: e.text, by: { id: id[e.by], name: e.by }, at: ago(e.days).toISOString(), conversationId: backend.id, channel: e.channel ?? "C0BACKEND", isDm: e.scope === "user", replyMessageId: corrected?.reply ?? 0, correctionMessageId: 2, link: null })
      : null;
    await db.memoryEntry.create({
      data: { id: e.id, workspaceId: ws.id, scope: e.scope, kind: e.kind, text: e.text, status: e.status ?? "active", source: e.fromCorrection ? "reaction" : "tool", createdById: id[e.by], ownerId: e.scope === "user" ? id[e.by] : null, channelKey: e.scope === "channel" ? (e.channel ?? "C0BACKEND") : null, origin, createdAt: ago(e.days), updatedAt: ago(e.days) },
    });
  };
  // Older team memory.
  await entry({ id: tagRule, scope: "team", kind: "rule", text: "ALWAYS tag releases with the date, as vYYYY.MM.DD", by: "Bo", days: 40, fromCorrection: true });
  await entry({ id: "rule-squash", scope: "team", kind: "rule", text: "ALWAYS squash-merge pull requests", by: "Cy", days: 50 });
  await entry({ id: "rule-no-squash", scope: "team", kind: "rule", text: "NEVER squash commits on release branches", by: "Bo", days: 20, fromCorrection: true });
  await entry({ id: "rule-cc-dan", scope: "team", kind: "rule", text: "ALWAYS cc Dan on release emails", by: "Dan", days: 60, status: "archived" });
  await revise("rule-cc-dan", "archive", 2, "Dan");
  for (const [n, text] of [["fact-stack", "The backend is TypeScript on Node 20 with PostgreSQL"], ["fact-oncall", "On-call hands over on Mondays at 10:00"]] as const) {
    await entry({ id: n, scope: "team", kind: "fact", text, by: "Bo", days: 70 });
  }
  // This week: Ana's correction, approved by Bo with ✅, becomes a team rule.
  const migrate = "ALWAYS run `pnpm db:migrate --dry-run` before applying a migration in production";
  await entry({ id: "lesson-ana-migrate", scope: "channel", kind: "lesson", text: migrate, by: "Ana", days: 3.5, status: "archived", fromCorrection: true, asked: { reply: 4, text: "How do I apply the new billing migration in production?" } });
  await revise("lesson-ana-migrate", "add", 3.5, "Ana");
  await revise("lesson-ana-migrate", "approval", 3, "Bo");
  await revise("lesson-ana-migrate", "promote", 3, "Bo");
  await entry({ id: "rule-migrate", scope: "team", kind: "rule", text: migrate, by: "Ana", days: 3, fromCorrection: true });
  await revise("rule-migrate", "add", 3, "Bo");
  // Cy corrects the same topic later in the week (a channel lesson, waiting for a ✅).
  await entry({ id: "lesson-cy-migrate", scope: "channel", kind: "lesson", text: "NEVER apply a production migration without a dry run first", by: "Cy", days: 1.5, fromCorrection: true, asked: { reply: 8, text: "Can I run the orders table migration on prod right now? It's blocking the release." } });
  // Eve corrected this last week in #ops, Dan again this week: promoted at once.
  const payments = "NEVER suggest restarting the payments worker before the on-call engineer has been paged";
  await entry({ id: "lesson-eve-payments", scope: "channel", kind: "lesson", text: payments, by: "Eve", days: 12, channel: "C0OPS", status: "archived", fromCorrection: true });
  await entry({ id: "lesson-dan-payments", scope: "channel", kind: "lesson", text: payments, by: "Dan", days: 2.2, channel: "C0OPS", status: "archived", fromCorrection: true });
  for (const l of ["lesson-eve-payments", "lesson-dan-payments"]) await revise(l, "promote", 2.2, "Dan");
  await entry({ id: "rule-payments", scope: "team", kind: "rule", text: payments, by: "Dan", days: 2.2, channel: "C0OPS", fromCorrection: true });
  await revise("rule-payments", "add", 2.2, "Dan");
  await entry({ id: "lesson-bo-incident", scope: "channel", kind: "lesson", text: "ALWAYS link the incident doc in the thread when an alert fires", by: "Bo", days: 1, channel: "C0OPS", fromCorrection: true });
  // A private lesson (a DM): counted, never shown.
  await entry({ id: "lesson-eve-dm", scope: "user", kind: "lesson", text: "ALWAYS answer me in Italian", by: "Eve", days: 2, fromCorrection: true });
  // A team fact Dan told cairn.
  await entry({ id: "fact-planning", scope: "team", kind: "fact", text: "The Q3 planning doc lives in Notion under Engineering/Planning", by: "Dan", days: 4 });
  await revise("fact-planning", "add", 4, "Dan");
  for (const [n, text, days] of [["pref-ana", "Ana prefers answers as bullet points", 30], ["pref-cy", "Cy works on the web app", 5]] as const) {
    await entry({ id: n, scope: "user", kind: "fact", text, by: n === "pref-ana" ? "Ana" : "Cy", days });
  }

  // Skills: one patched this week, one created, two never used.
  const skill = async (name: string, days: number, useCount: number) =>
    (await db.skill.create({ data: { workspaceId: ws.id, name, description: `Use for ${name}`, content: `---\nname: ${name}\n---\n`, contentHash: name, source: "tool", useCount, createdAt: ago(days) } })).id;
  const deploy = await skill("deploy-checklist", 80, 120);
  await revise(deploy, "patch", 2, "Bo", "skill");
  await skill("incident-report", 45, 30);
  await skill("sql-style", 4, 3);
  await skill("onboarding-laptop", 60, 0);
  await skill("vendor-escalation", 30, 0);
}

/** The memory platform, posting the core's rich posts as the Slack adapter does: blocks, with their fallback text. */
class SlackLike extends MemoryPlatform {
  readonly rich = new Map<string, SlackRichMessage>();

  override async open(target: PostTarget): Promise<ReplyTarget> {
    const place = await super.open(target);
    return {
      ...place,
      sendRich: async (post, fallbackMarkdown) => {
        const message = richMessage(post, fallbackMarkdown);
        if (!message) return null;
        const id = await place.send(message.text);
        this.rich.set(id, message);
        return id;
      },
    };
  }
}

/** Slack's escapes undone, so the text reads as Slack shows it (`*bold*` marks are kept). */
const shown = (mrkdwn: string) => mrkdwn.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** Blocks drawn as text: the header framed, sections as written, dividers as rules, the context as small print. */
function drawBlocks(blocks: readonly SlackBlock[]): string {
  const RULE = "─".repeat(60);
  return blocks
    .map((b) => {
      switch (b.type) {
        case "header":
          return `${"━".repeat(60)}\n${b.text.text}\n${"━".repeat(60)}`;
        case "section":
          return shown(b.text?.text ?? "");
        case "divider":
          return RULE;
        case "context":
          return b.elements.map((e) => ("text" in e ? `ⓘ ${e.text}` : "")).join("  ");
        default:
          return `[${b.type} block]`;
      }
    })
    .join("\n");
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-report-"));
  const database = await openDatabase(`file:${join(dir, "report.db")}`);
  try {
    await seed(database.prisma);
    const settings = benchSettings({ bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reportChannel: { platform: "slack", channel: REPORTS } } });
    const core = new Core({ database, model: fakeModel(respond), settings, log: silentLogger });
    const slack = new SlackLike("T0NORTHWIND");
    await slack.start(core.attach(slack));
    await core.jobs.enqueue("report", { slot: SLOT }, { uniqueKey: `report:${SLOT}` });
    await core.learning.drain();
    const posted = slack.shown.filter((m) => m.fromCairn && m.channel === REPORTS);
    const message = posted.length === 1 ? slack.rich.get(posted[0]!.id) : undefined;
    if (!message) throw new Error(`expected one report posted as blocks, got ${posted.length} message(s)`);
    process.stdout.write(`The report as a person sees it in Slack (#team-reports, ${REPORTS}; ${message.blocks.length} blocks):\n\n${drawBlocks(message.blocks)}\n\n`);
    process.stdout.write(`Its fallback text (notifications, clients without blocks), in Slack mrkdwn:\n\n${message.text}\n`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
