/**
 * Discord's slash commands and view buttons answered through the core's delivery path: the real
 * discord.js client against the fake Discord (gateway and REST), the real Core on the test
 * databases. A public answer is the interaction's message, stored and recorded as a delivery, so a
 * 👎 on it is feedback like on any reply; a long private answer is chunked once within Discord's
 * limits; a command that throws (typed, or run by a view's button) is answered with the core's one
 * apology.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeGuild, type FakeUser } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import { chunkText } from "../../src/ground/chunk.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { COMMAND_FAILED_REPLY } from "../../src/ground/replies.ts";
import type { Inbound } from "../../src/ground/types.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { DISCORD_MAX_LINES, DISCORD_MESSAGE_LIMIT } from "../../src/platforms/discord/limits.ts";

const person = (username: string): FakeUser => ({ id: snowflake(), username, globalName: username });
const alice = person("alice");
const bob = person("bob");
/** One guild per test: workspaces, and so lessons and jobs, never mix between tests. */
const GUILDS: (FakeGuild & { channel: string })[] = Array.from({ length: 4 }, (_, i) => {
  const channel = snowflake();
  return { id: snowflake(), name: `Guild ${i}`, channel, channels: [{ id: channel, name: "general" }], members: [alice, bob] };
});

forEachDatabase("discord commands through the delivery path", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  let used = 0;
  const nextGuild = () => GUILDS[used++]!;

  const db = () => getDb().prisma;
  const answersTo = (interactionId: string) => discord.posts.filter((p) => p.interactionId === interactionId);
  const inbound = (g: FakeGuild & { channel: string }, user: FakeUser): Inbound => ({
    platform: "discord",
    workspace: { externalId: g.id, name: g.name },
    author: { externalId: user.id, displayName: user.username },
    channel: { externalId: g.channel, isDm: false },
    threadId: null,
    messageId: `seed-${snowflake()}`,
    text: "",
    sentAt: new Date(),
  });

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: GUILDS });
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null });
    await core.start();
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });

  it("answers a public command with the interaction's message, stores it with its delivery, and takes a 👎 on it as feedback", async () => {
    const g = nextGuild();
    const id = discord.sendCommand({ user: alice, channelId: g.channel, subcommand: "new" });
    const answer = await waitFor(() => answersTo(id).find((p) => p.via === "interaction"), "the public answer");
    expect(answer.flags & 64).toBe(0);
    expect(answer.content).toContain("Started a new session");
    const delivery = await waitFor(async () => (await db().delivery.findFirst({ where: { channelId: g.channel, platformId: answer.id } })) ?? undefined, "the delivery");
    const stored = await db().message.findUniqueOrThrow({ where: { id: delivery.messageId } });
    expect(stored).toMatchObject({ role: "assistant", platformId: answer.id, sessionId: null });

    discord.react({ channelId: g.channel, messageId: answer.id, user: bob, emoji: "👎" });
    const job = await waitFor(
      async () => (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as Record<string, unknown>).find((p) => p.replyMessageId === delivery.messageId),
      "the feedback job",
    );
    expect(job).toMatchObject({ emoji: "👎", action: "added" });

    // A skin tone is the same signal: the adapter hands the core the bare character.
    discord.react({ channelId: g.channel, messageId: answer.id, user: alice, emoji: "👎🏽" });
    const toned = await waitFor(async () => {
      const jobs = (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as Record<string, unknown>).filter((p) => p.replyMessageId === delivery.messageId);
      return jobs.length === 2 ? jobs : undefined;
    }, "the second feedback job");
    expect(toned.map((p) => p["emoji"])).toEqual(["👎", "👎"]);
  });

  it("chunks a long private answer once, within Discord's limits, the rest as ephemeral follow-ups, recording nothing", async () => {
    const g = nextGuild();
    const place = await core.history.resolve(inbound(g, alice));
    await db().memoryEntry.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ workspaceId: place.workspace.id, scope: "team", kind: "rule", status: "active", source: "tool", text: `ALWAYS follow rule ${i}: ${"keep the runbook current and say so in the channel ".repeat(4)}` })),
    });
    const expected = chunkText((await core.command(inbound(g, alice), "lessons")).text, { maxChars: DISCORD_MESSAGE_LIMIT, maxLines: DISCORD_MAX_LINES });
    expect(expected.length).toBeGreaterThanOrEqual(3);

    const id = discord.sendCommand({ user: alice, channelId: g.channel, subcommand: "lessons" });
    const parts = await waitFor(() => answersTo(id).length >= expected.length && answersTo(id), "every part");
    await adapter.idle();
    expect(answersTo(id).map((p) => p.via)).toEqual(["interaction", ...expected.slice(1).map(() => "followup")]);
    expect(parts.map((p) => p.content)).toEqual(expected);
    for (const p of parts) {
      expect(p.flags & 64).toBe(64);
      expect(p.content.length).toBeLessThanOrEqual(DISCORD_MESSAGE_LIMIT);
      expect(p.content.split("\n").length).toBeLessThanOrEqual(DISCORD_MAX_LINES);
    }
    expect(await db().delivery.count({ where: { channelId: g.channel } })).toBe(0);
  });

  it("answers a typed command and a view's button that throw with the core's apology, privately", async () => {
    const g = nextGuild();
    // The command fails where every command starts: resolving where it was asked.
    const failing = vi.spyOn(core.history, "resolve").mockRejectedValueOnce(new Error("the store is down"));
    try {
      const typed = discord.sendCommand({ user: alice, channelId: g.channel, subcommand: "lessons" });
      const apology = await waitFor(() => answersTo(typed)[0], "the apology");
      expect(apology).toMatchObject({ via: "interaction", content: COMMAND_FAILED_REPLY });
      expect(apology.flags & 64).toBe(64);

      // A button of /cairn me (Delete 1), run while the command fails: the view is redrawn, the apology follows.
      const place = await core.history.resolve(inbound(g, alice));
      await core.memory.apply(scopeOf(place), [{ action: "add", target: "user", content: "Alice likes tea" }], { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: "seeded by the test" });
      const me = discord.sendCommand({ user: alice, channelId: g.channel, subcommand: "me" });
      const view = await waitFor(() => answersTo(me)[0], "the view");
      const button = view.components.flatMap((row) => row.components).find((b) => b.label === "Delete 1");
      if (!button?.custom_id) throw new Error("no Delete 1 button on the view");
      failing.mockRejectedValueOnce(new Error("the store is down"));
      const click = discord.click({ messageId: view.id, customId: button.custom_id, user: alice });
      const followUp = await waitFor(() => answersTo(click).find((p) => p.via === "followup"), "the button's apology");
      expect(followUp.content).toBe(COMMAND_FAILED_REPLY);
      expect(followUp.flags & 64).toBe(64);
      expect(answersTo(click)[0]!.via).toBe("update");
    } finally {
      failing.mockRestore();
    }
  });
});
