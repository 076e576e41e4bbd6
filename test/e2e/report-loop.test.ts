/**
 * The weekly report closes the loop (issue 27): on a seeded team, the report posted to the fake
 * Slack (Block Kit) and the fake Discord (embeds and components) carries every section (praise, the
 * curator's archives and merges with their rollbacks, facts superseded, conflicts decided and open,
 * items due for confirmation, the approval queue with ages), each with figures the test computes
 * from its own seed list; every proposal has buttons that run the typed command. A click runs its
 * command as the clicker: a non-admin's Roll back is refused and changes nothing, an admin's undoes
 * the curator's archive. Both databases.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { BOT_TOKEN, SIGNING_SECRET, blockActions, postInteraction, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { silentLogger } from "../../src/ground/log.ts";
import type { Core } from "../../src/app/core.ts";
import type { Db } from "../../src/db/client.ts";
import type { ReportChannel } from "../../src/learning/settings.ts";
import { at, seedTeam, type Seeded, type TeamSpec } from "../support/report-seed.ts";

const SLOT = "2025-03-10T09:00:00.000Z";
const END = new Date(SLOT);
const VERIFY_DAYS = 90;

/** The loop's rows, in days before the slot (this week: (0, 7]); the test's own statement of what each is. */
interface LoopSpec {
  /** Curator revisions: [entry key, action, days ago, the entry's scope]. */
  curator: [string, "archive" | "merge", number, "team" | "user"][];
  /** Superseded entries: [key, validUntil days ago, scope]. */
  superseded: [string, number, "team" | "user"][];
  /** Conflicts decided: [key, action, days ago]. */
  decided: [string, "keep_new" | "keep_old" | "keep_both", number][];
  /** Active entries: [key, scope, created days ago, verified days ago or null]. */
  active: [string, "team" | "channel" | "user", number, number | null][];
  /** Waiting: pending rule, share, skill proposal, conflict pair: [key, kind, days ago]. */
  waiting: [string, "rule" | "share" | "skill" | "conflict", number][];
}

const LOOP: LoopSpec = {
  curator: [["arch", "archive", 2, "team"], ["merged", "merge", 3, "team"], ["mine", "archive", 2, "user"], ["old-arch", "archive", 9, "team"]],
  superseded: [["was", 1, "team"], ["was-private", 2, "user"], ["was-old", 10, "team"]],
  decided: [["kn", "keep_new", 1], ["ko", "keep_old", 4], ["kb-old", "keep_both", 12]],
  active: [["stale1", "team", 200, null], ["stale2", "channel", 120, null], ["checked", "team", 200, 10], ["young", "team", 30, null], ["private-old", "user", 300, null]],
  waiting: [["pr", "rule", 3], ["sh", "share", 2], ["sk", "skill", 5], ["cf", "conflict", 1]],
};

/** What the report must say of LOOP, read from the spec alone. */
function expected(spec: LoopSpec) {
  const week = (d: number) => d > 0 && d <= 7;
  const queue = spec.waiting.length;
  return {
    curator: spec.curator.filter(([, , d, s]) => week(d) && s !== "user").map(([k]) => k),
    superseded: spec.superseded.filter(([, d, s]) => week(d) && s !== "user").length,
    decided: spec.decided.filter(([, , d]) => week(d)).length,
    open: spec.waiting.filter(([, k]) => k === "conflict").length,
    // Nobody confirmed for more than 90 days: the creation, or the verification when later.
    due: spec.active.filter(([, s, c, v]) => s !== "user" && Math.min(c, v ?? c) > VERIFY_DAYS).map(([k]) => k),
    queue,
    oldest: Math.max(...spec.waiting.map(([, , d]) => d)),
  };
}

async function seedLoop(db: Db, team: Seeded, channel: string, p: string): Promise<Record<string, string>> {
  const id = (k: string) => `${p}-${k}`;
  const ws = team.workspaceId;
  const by = team.people.Ana;
  const entry = (k: string, data: Record<string, unknown>) =>
    db.memoryEntry.create({ data: { id: id(k), workspaceId: ws, scope: "team", kind: "fact", text: `Entry ${k}`, status: "active", source: "tool", createdById: by, createdAt: at(END, 50), ...data } });
  const owned = (scope: string) => (scope === "user" ? { ownerId: by } : scope === "channel" ? { channelKey: channel } : {});
  const revs: Record<string, string> = {};
  for (const [k, action, d, scope] of LOOP.curator) {
    await entry(k, { scope, ...owned(scope), status: action === "archive" ? "archived" : "active" });
    revs[k] = (await db.revision.create({ data: { workspaceId: ws, entityType: "memory", entityId: id(k), action, source: "curator", runId: "curator:x", reason: "unused 60 days", oldText: `Entry ${k}`, newText: action === "merge" ? `Entry ${k}` : null, createdAt: at(END, d) } })).id;
  }
  await entry("now", { text: "The office is on floor 3" });
  for (const [k, d, scope] of LOOP.superseded) await entry(k, { scope, ...owned(scope), status: "superseded", text: `Was ${k}`, validUntil: at(END, d), supersededById: id("now") });
  for (const [k, action, d] of LOOP.decided) {
    await entry(k, {});
    await db.revision.create({ data: { workspaceId: ws, entityType: "memory", entityId: id(k), action, source: "tool", actorId: by, newText: `Entry ${k}`, createdAt: at(END, d) } });
  }
  for (const [k, scope, c, v] of LOOP.active) await entry(k, { scope, ...owned(scope), createdAt: at(END, c), verifiedAt: v === null ? null : at(END, v) });
  const conv = await db.conversation.findFirstOrThrow({ where: { workspaceId: ws } });
  for (const [k, kind, d] of LOOP.waiting) {
    if (kind === "rule") await entry(k, { kind: "rule", status: "pending", createdAt: at(END, d) });
    if (kind === "share") await entry(k, { scope: "channel", channelKey: channel, proposedScope: "team", createdAt: at(END, d) });
    if (kind === "conflict") {
      await entry(`${k}-old`, { conflictWithId: id(k), createdAt: at(END, 40) });
      await entry(k, { conflictWithId: id(`${k}-old`), createdAt: at(END, d) });
    }
    if (kind === "skill") {
      const skill = await db.skill.create({ data: { workspaceId: ws, name: `${p}-notes`, description: "notes", content: "a", contentHash: "a", source: "tool", scope: "team", createdAt: at(END, 60) } });
      revs[k] = (await db.skillProposal.create({ data: { workspaceId: ws, skillId: skill.id, name: `${p}-notes`, oldText: "a\n", newText: "a\nb\n", reason: "add b", conversationId: conv.id, createdAt: at(END, d) } })).id;
    }
  }
  // Praise: two of this week's answers got a 👍 (and one of them two).
  const traces = await db.replyTrace.findMany({ where: { workspaceId: ws, createdAt: { gte: at(END, 7), lt: END } }, orderBy: { createdAt: "asc" }, take: 2 });
  for (const [i, t] of traces.entries()) await db.replyTrace.update({ where: { messageId: t.messageId }, data: { positive: i + 1 } });
  return revs;
}

function team(platform: "slack" | "discord", externalId: string, channel: string): TeamSpec {
  return { platform, externalId, name: "Initech", channel, replies: [4, 3], corrections: [1, 0], traces: [{ week: 0, index: 0, skills: [] }, { week: 0, index: 1, skills: [] }], entries: [], skills: [] };
}

const Block = z.looseObject({ type: z.string(), text: z.looseObject({ text: z.string() }).optional(), elements: z.array(z.looseObject({ action_id: z.string().optional(), value: z.string().optional() })).optional() });

forEachDatabase("the report closes the loop", (getDb) => {
  let fake: FakeAnthropic;
  let slack: FakeSlack;
  let slackHandle: SlackHandle;
  let discord: FakeDiscord;
  let discordAdapter: DiscordAdapter;
  let slackCore: Core;
  let discordCore: Core;
  const p = uniqueId("l");
  const slackTeam = uniqueId("T");
  const slackChannel = `C${randomBytes(4).toString("hex").toUpperCase()}`;
  const guild = snowflake();
  const discordChannel = snowflake();
  const ada: FakeUser = { id: snowflake(), username: "ada", globalName: "Ada" };
  const bob: FakeUser = { id: snowflake(), username: "bob", globalName: "Bob" };
  const want = expected(LOOP);
  let slackRevs: Record<string, string>;
  let discordRevs: Record<string, string>;

  const admins = accessPolicy({ admins: ["slack:UADMIN", `discord:${ada.id}`], users: [], channels: [], roles: [] });
  const core = (reportChannel: ReportChannel) => makeCore(getDb(), fake, { bundledSkillsDir: null, access: admins, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reportChannel } });
  const entryStatus = async (id: string) => (await getDb().prisma.memoryEntry.findUniqueOrThrow({ where: { id } })).status;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.setDefault({ text: "not the JSON asked for" });
    slack = await startFakeSlack();
    slack.addUser({ id: "UADMIN", name: "admin" });
    slack.addUser({ id: "UBOB", name: "bob" });
    discord = await startFakeDiscord({ guilds: [{ id: guild, name: "Initech", channels: [{ id: discordChannel, name: "general" }], members: [ada, bob] }] });
    slackCore = core({ platform: "slack", channel: slackChannel });
    discordCore = core({ platform: "discord", channel: discordChannel });
    slackHandle = await startSlack(slackCore, { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl, port: 0, host: "127.0.0.1", retries: 1, retryMinMs: 10, progressIntervalMs: 50, drainMs: 5_000 }, silentLogger);
    discordAdapter = await startDiscord(discordCore, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { shutdownGraceMs: 5_000 });
    const db = getDb().prisma;
    slackRevs = await seedLoop(db, await seedTeam(db, END, team("slack", slackTeam, slackChannel)), slackChannel, `${p}-s`);
    discordRevs = await seedLoop(db, await seedTeam(db, END, team("discord", guild, discordChannel)), discordChannel, `${p}-d`);
  });
  afterAll(async () => {
    await slackHandle?.stop();
    await discordAdapter?.stop();
    await slack?.close();
    await discord?.close();
    await fake?.close();
  });

  /** Every section, with the figures of the spec. */
  const headings = (prefix: string) => [
    "Who used cairn (private messages counted, never quoted)",
    "Corrections and what cairn remembers",
    "Most praised answers (a 👍 or other praise this week; private messages left out)",
    "What cairn learned this week",
    "What cairn tidied up (its weekly clean-up of what it knows; admins can undo any of it)",
    `Facts that changed (${want.superseded} no longer true, ${want.decided} disagreements settled, ${want.open} open)`,
    `Due for confirmation (${want.due.length} things the team taught cairn that nobody has said are still true for ${VERIFY_DAYS} days)`,
    `Waiting for approval (${want.queue} in all, the oldest ${want.oldest} days; a button runs the command as whoever clicks it)`,
  ].map((h) => `${prefix}${h}${prefix}`);

  it("posts every section to Slack as blocks, with buttons that run each command as the person who clicks", async () => {
    await slackCore.jobs.enqueue("report", { slot: SLOT }, { uniqueKey: `loop:${SLOT}:slack` });
    await slackCore.learning.drain();
    const [post] = slack.messages(slackChannel).filter((m) => m.user === slack.bot.userId || m.bot_id);
    const blocks = z.array(Block).parse(post!.blocks);
    const sections = blocks.filter((b) => b.type === "section").map((b) => b.text!.text);
    expect(sections.map((t) => t.split("\n")[0])).toEqual(headings("*"));
    const text = (h: string) => sections.find((t) => t.startsWith(`*${h}`))!;
    expect(text("Most praised answers")).toContain("2 answers, praised 3 times");
    const curator = text("What cairn tidied up");
    expect(want.curator.map((k) => curator.includes(`\`/cairn rollback ${slackRevs[k]}\``))).toEqual(want.curator.map(() => true));
    expect(curator).not.toContain(slackRevs.mine);
    expect(curator).not.toContain(slackRevs["old-arch"]);
    expect(text("Facts that changed")).toContain(`A fact "Was was" no longer holds since ${at(END, 1).toISOString().slice(0, 10)}; now: "The office is on floor 3"`);
    expect(want.due.map((k) => text("Due for confirmation").includes(`/cairn verify ${p}-s-${k}`))).toEqual(want.due.map(() => true));
    const queue = text("Waiting for approval");
    expect(queue).toContain(`waiting 5 days · \`/cairn approve ${slackRevs.sk}\``);
    expect(queue).toContain(`\`/cairn keep new ${p}-s-cf\` · \`/cairn keep old ${p}-s-cf\` · \`/cairn keep both ${p}-s-cf\``);
    // The whole workspace reads the report: a channel's entries are named by their channel, never quoted; team ones are.
    expect(queue).toContain(`Asked for the whole team: in <#${slackChannel}>: waiting 2 days`);
    expect(queue).not.toContain("Entry sh");
    expect(text("Due for confirmation")).not.toContain("Entry stale2");
    expect(text("Due for confirmation")).toContain('"Entry stale1"');

    // Every proposal's command is a button; every curator action (up to three) can be rolled back by one.
    const buttons = blocks.filter((b) => b.type === "actions").flatMap((b) => b.elements ?? []);
    const values = buttons.map((b) => b.value);
    for (const cmd of [`approve ${p}-s-pr`, `reject ${p}-s-pr`, `approve ${p}-s-sh`, `approve ${slackRevs.sk}`, `keep new ${p}-s-cf`, `keep both ${p}-s-cf`, `rollback ${slackRevs.arch}`]) expect(values).toContain(cmd);

    // Bob (no admin) clicks Roll back on the curator's archive: refused, nothing changes, and he alone is told.
    const rollback = buttons.find((b) => b.value === `rollback ${slackRevs.arch}`)!;
    const click = async (user: string) => {
      const before = slack.callsTo("chat.postEphemeral").length;
      const payload = blockActions({ teamId: slackTeam, user, channel: slackChannel, messageTs: post!.ts, messageUser: slack.bot.userId, actionId: rollback.action_id!, value: rollback.value! });
      expect((await postInteraction(`http://127.0.0.1:${slackHandle.port}/slack/events`, payload)).status).toBe(200);
      return slack.waitFor("the click's answer", () => slack.callsTo("chat.postEphemeral")[before]);
    };
    const refused = await click("UBOB");
    expect(refused.args).toMatchObject({ channel: slackChannel, user: "UBOB" });
    expect(String(refused.args.text)).toContain("Only cairn admins can roll back");
    expect(await entryStatus(`${p}-s-arch`)).toBe("archived");
    // The admin's click undoes it, as `/cairn rollback` typed would.
    const done = await click("UADMIN");
    // The answer names the revision by its id or the id's short form (its first characters).
    expect(String(done.args.text)).toContain(`Rolled back revision ${slackRevs.arch!.slice(0, 8)}`);
    expect(await entryStatus(`${p}-s-arch`)).toBe("active");
  });

  it("posts every section to Discord as embed fields, with the commands as components run by the clicker", async () => {
    // The Slack run stored this team's report for the slot without posting it: the same week asked for by hand.
    await discordCore.jobs.enqueue("report", { slot: `manual:${SLOT}` }, { uniqueKey: `loop:${SLOT}:discord` });
    await discordCore.learning.drain();
    const posted = await waitFor(() => discord.posts.find((m) => m.channelId === discordChannel && m.via === "channel"), "the report on Discord");
    const fields = posted.embeds.flatMap((e) => e.fields ?? []);
    expect(fields.map((f) => f.name).filter((n) => n !== "\u200b")).toEqual(headings(""));
    const field = (h: string) => fields.find((f) => f.name.startsWith(h))!.value;
    expect(field("Waiting for approval")).toContain(`waiting 3 days · \`/cairn approve ${p}-d-pr\``);
    expect(field("Due for confirmation")).toContain(`/cairn verify ${p}-d-stale1`);
    const ids = posted.components.flatMap((r) => r.components.map((b) => b.custom_id));
    expect(ids.length).toBeLessThanOrEqual(25);
    for (const cmd of [`approve ${p}-d-pr`, `reject ${p}-d-sh`, `approve ${discordRevs.sk}`, `keep old ${p}-d-cf`, `rollback ${discordRevs.arch}`]) expect(ids).toContain(`cairn:p:${cmd}`);

    const click = async (user: FakeUser) => {
      const id = discord.click({ messageId: posted.id, customId: `cairn:p:rollback ${discordRevs.arch}`, user });
      return waitFor(() => discord.posts.find((m) => m.interactionId === id && m.content), "the click's answer");
    };
    const refused = await click(bob);
    expect(refused.flags & 64).toBe(64);
    expect(refused.content).toContain("Only cairn admins can roll back");
    expect(await entryStatus(`${p}-d-arch`)).toBe("archived");
    const done = await click(ada);
    expect(done.content).toContain(`Rolled back revision ${discordRevs.arch!.slice(0, 8)}`);
    expect(await entryStatus(`${p}-d-arch`)).toBe("active");
    // The report itself is left as it was, for the others to act on.
    expect(discord.posts.filter((m) => m.id === posted.id && m.via === "update")).toHaveLength(0);
  });
});
