/**
 * `npm run home:example` (`npx tsx scripts/home-example.ts`): a made-up team's Slack Home tab, as
 * one of its people sees it. A temporary SQLite database is seeded (four people, profiles, lessons
 * in two channels, a proposal, team rules and memory, a persona, skills of every status, a weekly
 * report), the core builds Ana's view (she is a cairn admin, and a member of #backend but not of
 * #ops), the Slack adapter's own code turns it into the Home tab's Block Kit (the same
 * src/platforms/slack/home/*.ts the Home tab publishes with, page size shrinking included), and the
 * blocks are printed as text, as a person sees them in Slack. No keys, no network.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Db } from "../src/db/client.ts";
import { Core } from "../src/app/core.ts";
import type { Inbound } from "../src/ground/types.ts";
import { silentLogger } from "../src/ground/log.ts";
import { accessPolicy } from "../src/admission/access.ts";
import { BUNDLED_SKILLS_DIR } from "../src/app/settings.ts";
import type { SlackBlock } from "../src/platforms/slack/client.ts";
import { HOME_PAGE_SIZE, renderHome } from "../src/platforms/slack/home/publish.ts";
import { initialState } from "../src/platforms/slack/home/state.ts";
import { benchSettings } from "../bench/lib/core.ts";
import { fakeModel } from "../bench/lib/model.ts";

const TEAM = "T0NORTHWIND";
const BACKEND = "C0BACKEND";
const OPS = "C0OPS";
const NOW = new Date("2025-06-16T09:00:00.000Z");
const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);
const PEOPLE = ["Ana", "Bo", "Cy", "Dan"] as const;
type Who = (typeof PEOPLE)[number];

async function seed(db: Db): Promise<void> {
  const ws = await db.workspace.create({ data: { platform: "slack", externalId: TEAM, name: "Northwind", createdAt: ago(90) } });
  const id = {} as Record<Who, string>;
  for (const n of PEOPLE) id[n] = (await db.person.create({ data: { workspaceId: ws.id, externalId: `U0${n.toUpperCase()}`, displayName: n } })).id;
  const thread = await db.conversation.create({ data: { workspaceId: ws.id, key: `slack:${TEAM}:${BACKEND}:1749000000.000100`, channelId: BACKEND, threadId: "1749000000.000100", isDm: false } });
  const proposalPost = await db.message.create({ data: { workspaceId: ws.id, conversationId: thread.id, role: "assistant", text: "Proposed as a team rule", status: "sent" } });
  const entry = (e: { id: string; scope: string; kind: string; text: string; by: Who; days: number; channel?: string; proposed?: boolean }) =>
    db.memoryEntry.create({
      data: {
        id: e.id,
        workspaceId: ws.id,
        scope: e.scope,
        kind: e.kind,
        text: e.text,
        source: e.kind === "lesson" ? "reaction" : "tool",
        createdById: id[e.by],
        ownerId: e.scope === "user" ? id[e.by] : null,
        channelKey: e.scope === "channel" ? (e.channel ?? BACKEND) : null,
        proposalMessageId: e.proposed ? proposalPost.id : null,
        createdAt: ago(e.days),
        updatedAt: ago(e.days),
      },
    });
  await entry({ id: "pref-ana-bullets", scope: "user", kind: "fact", text: "Ana prefers answers as bullet points", by: "Ana", days: 30 });
  await entry({ id: "pref-ana-stack", scope: "user", kind: "fact", text: "Ana works on the payments API (Go, PostgreSQL)", by: "Ana", days: 12 });
  await entry({ id: "pref-bo", scope: "user", kind: "fact", text: "Bo is on leave in July", by: "Bo", days: 5 });
  await entry({ id: "lesson-ana-dm", scope: "user", kind: "lesson", text: "ALWAYS give Ana the command before the explanation", by: "Ana", days: 3 });
  await entry({ id: "lesson-cy-flags", scope: "channel", kind: "lesson", text: "NEVER remove a feature flag in the same release that turns it on", by: "Cy", days: 8 });
  await entry({ id: "lesson-ana-logs", scope: "channel", kind: "lesson", text: "ALWAYS link the Grafana panel when quoting latency", by: "Ana", days: 6 });
  await entry({ id: "lesson-dan-ops", scope: "channel", kind: "lesson", text: "ALWAYS page the payments on-call before restarting the worker", by: "Dan", days: 2, channel: OPS });
  await entry({ id: "lesson-bo-migrate", scope: "channel", kind: "lesson", text: "ALWAYS run `pnpm db:migrate --dry-run` before a production migration", by: "Bo", days: 1, proposed: true });
  await entry({ id: "rule-squash", scope: "team", kind: "rule", text: "ALWAYS squash-merge pull requests", by: "Cy", days: 50 });
  await entry({ id: "rule-tags", scope: "team", kind: "rule", text: "ALWAYS tag releases with the date, as vYYYY.MM.DD", by: "Bo", days: 40 });
  await entry({ id: "fact-stack", scope: "team", kind: "fact", text: "The backend is TypeScript on Node 20 with PostgreSQL", by: "Bo", days: 70 });
  await entry({ id: "fact-oncall", scope: "team", kind: "fact", text: "On-call hands over on Mondays at 10:00", by: "Dan", days: 20 });
  await db.persona.create({ data: { workspaceId: ws.id, text: "Be brief and concrete. Name the runbook when there is one.", updatedById: id.Ana } });
  const skill = (name: string, description: string, s: { status?: string; pinned?: boolean; uses?: number; scope?: string; owner?: Who; channel?: string } = {}) =>
    db.skill.create({
      data: {
        workspaceId: ws.id,
        name,
        description,
        content: `---\nname: ${name}\n---\n`,
        contentHash: name,
        source: "tool",
        status: s.status ?? "active",
        pinned: s.pinned ?? false,
        useCount: s.uses ?? 0,
        lastUsedAt: s.uses ? ago(1) : null,
        scope: s.scope ?? "team",
        ownerId: s.owner ? id[s.owner] : null,
        channelKey: s.channel ?? null,
      },
    });
  await skill("deploy-checklist", "Steps to ship the backend to production", { uses: 120, pinned: true });
  await skill("incident-report", "Write the incident report from the thread", { uses: 30 });
  await skill("sql-style", "How the team writes SQL", { uses: 3 });
  await skill("onboarding-laptop", "Set up a new laptop", { status: "stale" });
  await skill("vendor-escalation", "Escalate to the payments vendor", { status: "archived" });
  await skill("release-notes", "Draft release notes from merged pull requests", { uses: 9 });
  await skill("flaky-tests", "Triage a flaky test", { uses: 4 });
  await skill("ana-standup", "Ana's standup notes format", { scope: "user", owner: "Ana", uses: 11 });
  await skill("ops-restart", "Restart the payments worker safely", { scope: "channel", channel: OPS, uses: 2 });
  const metrics = {
    periodStart: ago(7).toISOString(),
    periodEnd: NOW.toISOString(),
    weeks: [27, 33, 29, 35, 38, 44, 41, 46].map((replies, i) => ({ replies, corrections: [7, 6, 7, 6, 6, 5, 6, 5][i]!, per100: Math.round(([7, 6, 7, 6, 6, 5, 6, 5][i]! / replies) * 1000) / 10 })),
    lessons: { proposed: 3, approved: 1, promoted: 1 },
    rules: { added: 2, archived: 1, active: 2 },
    skills: { created: 1, patched: 1 },
  };
  await db.report.create({ data: { workspaceId: ws.id, slot: NOW.toISOString(), periodStart: ago(7), periodEnd: NOW, data: JSON.stringify({ metrics }), text: "(the report)" } });
}

/** Slack's escapes undone, so the text reads as Slack shows it (`*bold*` marks are kept). */
const shown = (mrkdwn: string) => mrkdwn.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** A button as text: its label, with ⚠ where Slack asks for confirmation first. */
function buttonText(b: { type: string; text?: { text: string }; confirm?: unknown }): string {
  return b.type === "button" ? `[ ${b.text?.text ?? ""}${b.confirm ? " ⚠" : ""} ]` : `[${b.type}]`;
}

/** Blocks drawn as text: headers framed, sections as written with their button, actions as a row of buttons. */
function drawBlocks(blocks: readonly SlackBlock[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case "header":
        out.push("", b.text.text.toUpperCase(), "━".repeat(60));
        break;
      case "section": {
        const text = shown(b.text?.text ?? "");
        const isItem = b.block_id?.startsWith("item:") === true;
        const body = isItem ? text.split("\n").map((l, i) => (i === 0 ? `  • ${l}` : `    ${l}`)).join("\n") : text;
        out.push(b.accessory ? `${body}   ${buttonText(b.accessory)}` : body);
        break;
      }
      case "actions":
        out.push(`    ${b.elements.map((e) => buttonText(e)).join(" ")}`);
        break;
      case "context":
        out.push(b.elements.map((e) => ("text" in e ? `ⓘ ${shown(e.text)}` : "")).join("  "));
        break;
      case "divider":
        out.push("─".repeat(60));
        break;
      default:
        out.push(`[${b.type} block]`);
    }
  }
  return out.join("\n");
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-home-"));
  const database = await openDatabase(`file:${join(dir, "home.db")}`);
  try {
    await seed(database.prisma);
    const settings = benchSettings({ bundledSkillsDir: BUNDLED_SKILLS_DIR, access: accessPolicy({ admins: ["slack:U0ANA"], users: [], channels: [], roles: [] }) });
    const core = new Core({ database, model: fakeModel(() => ({ text: "unused" })), settings, log: silentLogger, now: () => NOW });
    // Imports the bundled skills (nothing else runs: no jobs, no schedules).
    await core.start();
    const ana: Inbound = {
      platform: "slack",
      workspace: { externalId: TEAM },
      author: { externalId: "U0ANA" },
      channel: { externalId: "D0ANA", isDm: true },
      threadId: null,
      messageId: "home:example",
      text: "home",
      sentAt: NOW,
    };
    // Ana is in #backend, not in #ops (what users.conversations would answer).
    const home = await renderHome((req) => core.view(ana, { ...req, channels: [BACKEND] }), initialState(HOME_PAGE_SIZE), HOME_PAGE_SIZE);
    const blocks = home.view.blocks as SlackBlock[];
    process.stdout.write(`Ana's Home tab in Northwind (a cairn admin; in #backend, not in #ops): ${home.blocks} blocks, ${home.pageSize} items a page.\n`);
    process.stdout.write(`[ … ] is a button (⚠: Slack asks to confirm first); each runs its /cairn command as Ana.\n`);
    process.stdout.write(`${drawBlocks(blocks)}\n`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
