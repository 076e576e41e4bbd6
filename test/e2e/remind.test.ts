/**
 * Approvals nobody can miss (issue 27): the hourly `remind` job, through the real Slack adapter and
 * the fake Slack. A proposal of each kind (a team rule, an entry asked for the team, a skill
 * proposal, a conflict) waiting longer than the window is posted once more in its thread, with its
 * buttons; one that has not waited long is not; a second run posts nothing more. The admins get one
 * DM digest a day: two runs the same day send one, a run the next day another. Both databases.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { BOT_TOKEN, SIGNING_SECRET, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { silentLogger } from "../../src/ground/log.ts";
import type { Core } from "../../src/app/core.ts";
import type { Db } from "../../src/db/client.ts";

const HOUR = 3_600_000;
const START = new Date("2026-05-04T10:15:00.000Z");

const Actions = z.array(z.looseObject({ type: z.string(), elements: z.array(z.looseObject({ value: z.string().optional() })).optional() }));

forEachDatabase("approval reminders", (getDb) => {
  let fake: FakeAnthropic;
  let slack: FakeSlack;
  let handle: SlackHandle;
  let core: Core;
  let clock = START;
  const team = uniqueId("T");
  const channel = `C${randomBytes(4).toString("hex").toUpperCase()}`;
  const threadTs = "1777000000.000100";
  const admins = ["UADMIN1", "UADMIN2"];
  const ids = { rule: uniqueId("rule"), share: uniqueId("share"), fresh: uniqueId("fresh"), newer: uniqueId("new"), older: uniqueId("old"), skill: "" };

  const ago = (hours: number) => new Date(START.getTime() - hours * HOUR);
  const threadPosts = () => slack.messages(channel).filter((m) => (m.bot_id || m.user === slack.bot.userId) && m.thread_ts === threadTs);
  const dmPosts = (user: string) => slack.messages(slack.dmChannel(user)).filter((m) => m.bot_id || m.user === slack.bot.userId);
  const run = async (slot: string) => {
    await core.jobs.enqueue("remind", { slot }, { uniqueKey: `remind:${slot}` });
    await core.learning.drain();
  };

  async function seed(db: Db): Promise<void> {
    const ws = await db.workspace.create({ data: { platform: "slack", externalId: team, name: "Acme", createdAt: ago(500) } });
    const ana = await db.person.create({ data: { workspaceId: ws.id, externalId: "UANA", displayName: "Ana" } });
    const conv = await db.conversation.create({ data: { workspaceId: ws.id, key: `slack:${team}:${channel}:${threadTs}`, channelId: channel, threadId: threadTs, isDm: false, createdAt: ago(500) } });
    const message = (role: "user" | "assistant", hours: number) =>
      db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role, text: `${role} ${hours}h ago`, status: role === "user" ? "answered" : "sent", authorId: role === "user" ? ana.id : null, createdAt: ago(hours) } });
    const entry = (id: string, data: Record<string, unknown>) =>
      db.memoryEntry.create({ data: { id, workspaceId: ws.id, source: "tool", createdById: ana.id, createdAt: ago(300), scope: "team", kind: "fact", text: id, ...data } });
    // A team rule proposed 30 hours ago (its post is what it waits since), an entry asked for the team 40 hours ago,
    // and one asked 2 hours ago: within the window.
    await entry(ids.rule, { kind: "rule", status: "pending", text: "ALWAYS tag releases", proposalMessageId: (await message("assistant", 30)).id });
    await entry(ids.share, { scope: "channel", channelKey: channel, status: "active", proposedScope: "team", text: "The VPN is at vpn.acme.example", sourceMessageId: (await message("user", 40)).id, createdAt: ago(40) });
    await entry(ids.fresh, { scope: "channel", channelKey: channel, status: "active", proposedScope: "team", text: "Lunch is at noon", sourceMessageId: (await message("user", 2)).id, createdAt: ago(2) });
    // A conflict asked about 50 hours ago: two active team facts pointing at each other.
    const asked = (await message("assistant", 50)).id;
    await entry(ids.older, { text: "Deploys happen on Tuesdays", status: "active", conflictWithId: ids.newer, conflictPostId: asked, createdAt: ago(400) });
    await entry(ids.newer, { text: "Deploys happen on Thursdays", status: "active", conflictWithId: ids.older, conflictPostId: asked, createdAt: ago(50) });
    const skill = await db.skill.create({ data: { workspaceId: ws.id, name: "release-notes", description: "Use for release notes", content: "---\nname: release-notes\n---\n", contentHash: "h", source: "tool", scope: "team" } });
    const p = await db.skillProposal.create({
      data: { workspaceId: ws.id, skillId: skill.id, name: "release-notes", oldText: "a\n", newText: "a\nb\n", reason: "mention the changelog", proposedById: ana.id, conversationId: conv.id, proposalMessageId: (await message("assistant", 26)).id, createdAt: ago(26) },
    });
    ids.skill = p.id;
  }

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.setDefault({ text: "ok" });
    slack = await startFakeSlack();
    const access = accessPolicy({ admins: admins.map((a) => `slack:${a}`), users: [], channels: [], roles: [] });
    core = makeCore(getDb(), fake, { bundledSkillsDir: null, access, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, freshness: { verifyDays: 90, decayDays: 180, remindHours: 24 } } }, () => clock);
    handle = await startSlack(core, { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl, port: 0, host: "127.0.0.1", retries: 1, retryMinMs: 10, progressIntervalMs: 50, drainMs: 5_000 }, silentLogger);
    await seed(getDb().prisma);
  });
  afterAll(async () => {
    await handle?.stop();
    await slack?.close();
    await fake?.close();
  });

  it("reminds each proposal past the window once in its thread, with its buttons, and sends the admins one digest a day", async () => {
    const db = getDb().prisma;
    await run(START.toISOString());

    // Four reminders in the thread (rule, share, conflict, skill), longest waiting first; the 2-hour-old share is not one.
    const posts = threadPosts();
    expect(posts).toHaveLength(4);
    expect(posts.map((m) => m.text)).toEqual([
      expect.stringContaining("Conflict: \"Deploys happen on Thursdays\" (new) vs \"Deploys happen on Tuesdays\" (old)"),
      expect.stringContaining("Asked for the whole team: \"The VPN is at vpn.acme.example\""),
      expect.stringContaining("Team rule \"ALWAYS tag releases\""),
      expect.stringContaining("Change to team skill `release-notes`"),
    ]);
    expect(posts[0]!.text).toContain("2 days now");
    expect(posts[2]!.text).toContain("1 day now");
    expect(posts.some((m) => m.text.includes("Lunch is at noon"))).toBe(false);
    // Each carries the buttons of the commands it names: keep new/old/both for the conflict, approve/reject for the rest.
    const values = posts.map((m) => Actions.parse(m.blocks).flatMap((b) => (b.type === "actions" ? (b.elements ?? []).map((e) => e.value) : [])));
    expect(values).toEqual([
      [`keep new ${ids.newer}`, `keep old ${ids.newer}`, `keep both ${ids.newer}`],
      [`approve ${ids.share}`, `reject ${ids.share}`],
      [`approve ${ids.rule}`, `reject ${ids.rule}`],
      [`approve ${ids.skill}`, `reject ${ids.skill}`],
    ]);
    const reminded = await db.memoryEntry.findMany({ where: { id: { in: [ids.rule, ids.share, ids.fresh, ids.newer, ids.older] } }, select: { id: true, remindedAt: true } });
    expect(Object.fromEntries(reminded.map((e) => [e.id, e.remindedAt?.toISOString() ?? null]))).toEqual({
      [ids.rule]: START.toISOString(),
      [ids.share]: START.toISOString(),
      [ids.fresh]: null,
      [ids.newer]: START.toISOString(),
      [ids.older]: START.toISOString(),
    });
    expect((await db.skillProposal.findUniqueOrThrow({ where: { id: ids.skill } })).remindedAt?.toISOString()).toBe(START.toISOString());

    // Each admin: one DM listing the four, with their ages and the commands, and buttons.
    for (const admin of admins) {
      const dms = dmPosts(admin);
      expect(dms).toHaveLength(1);
      expect(dms[0]!.text).toContain("Waiting for approval in Acme: 4 items");
      expect(dms[0]!.text).toContain(`\`/cairn approve ${ids.rule}\``);
      expect(dms[0]!.text).toContain("waiting 1 day ·");
      expect(dms[0]!.text).not.toContain("Lunch is at noon");
    }

    // The next hour, the same day: nothing more in the thread, no second digest.
    clock = new Date(START.getTime() + HOUR);
    await run(clock.toISOString());
    expect(threadPosts()).toHaveLength(4);
    for (const admin of admins) expect(dmPosts(admin)).toHaveLength(1);

    // A day later the 2-hour-old share is overdue too: reminded once; the admins get the day's digest.
    clock = new Date(START.getTime() + 24 * HOUR);
    await run(clock.toISOString());
    expect(threadPosts()).toHaveLength(5);
    expect(threadPosts().at(-1)!.text).toContain("Lunch is at noon");
    for (const admin of admins) {
      expect(dmPosts(admin)).toHaveLength(2);
      expect(dmPosts(admin)[1]!.text).toContain("5 items");
    }
    const jobs = await core.jobs.list("remind-digest");
    expect(jobs.filter((j) => j.status === "done")).toHaveLength(2);
  });
});
