/**
 * Two cairn replicas holding the same DISCORD_TOKEN: two Cores, each with its own handle on one
 * database (as two processes have), each with its own Discord adapter (the real discord.js client)
 * logged in to the same fake Discord. Each replica's gateway session receives every dispatch, as on
 * Discord; the tests show that the bot still acts once: one answer per message (the core's storage
 * decides), and one answer per interaction, notice, refusal and reaction (a claim in the database
 * decides), with what the fake Discord received and what the database holds.
 *
 * Nothing sleeps: a test waits until both clients have received a dispatch and both adapters have
 * finished every handler it started, then looks.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, sameDatabase, type Database } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { settledOn, type DispatchData } from "../support/discord-settled.ts";
import { lastUserText, startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, type FakeDiscord, type FakeUser, type PostedMessage } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import { accessPolicy, REFUSED_CHANNEL_TEXT } from "../../src/admission/access.ts";
import { CORRECTION_QUESTION } from "../../src/learning/feedback-job.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { NOTICES } from "../../src/platforms/discord/events.ts";

const GUILD = snowflake();
const ch = { general: snowflake(), notes: snowflake(), closed: snowflake() };
const person = (username: string, globalName: string): FakeUser => ({ id: snowflake(), username, globalName });
const alice = person("alice", "Alice");
const bob = person("bob", "Bob");
const carol = person("carol", "Carol");

/** What the fake model answers: the person's newest message (without its "[Name] " label), quoted. */
const echo = (req: RecordedRequest): Step => ({ text: `re: ${(lastUserText(req).split("\n\n").at(-1) ?? "").replace(/^\[[^\]]+\] /, "")}` });

interface Replica {
  core: Core;
  adapter: DiscordAdapter;
}

forEachDatabase("two replicas with one Discord bot token", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let second: Database;
  const replicas: Replica[] = [];
  const db = () => getDb().prisma;
  const mention = () => `<@${discord.bot.id}>`;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: [{ id: GUILD, name: "Acme", channels: Object.entries(ch).map(([name, id]) => ({ id, name })), members: [alice, bob, carol] }] });
    second = await sameDatabase(getDb());
    // cairn serves every channel but #closed, where it refuses those who address it.
    const access = accessPolicy({ admins: [], users: [], channels: [`discord:${ch.general}`, `discord:${ch.notes}`], roles: [] });
    for (const database of [getDb(), second]) {
      const core = makeCore(database, anthropic, { bundledSkillsDir: null, access });
      await core.start();
      // Typing is refreshed every minute: each turn here sends its first indicator only.
      const adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, {
        typingIntervalMs: 60_000,
        interactionDeferMs: 2_000,
        shutdownGraceMs: 5_000,
      });
      replicas.push({ core, adapter });
    }
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.adapter.stop()));
    await Promise.all([second?.close(), discord?.close(), anthropic?.close()]);
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault(echo);
  });

  /** Sends through `send`, then waits until both replicas got the dispatch and every handler they started is done. */
  const settled = <T>(t: string, pick: (d: DispatchData, sent: T) => boolean, send: () => T): Promise<T> =>
    settledOn(replicas.map((r) => r.adapter), t, pick, send);
  const settledMessage = (send: () => { id: string }) => settled("MESSAGE_CREATE", (d, sent) => d["id"] === sent.id, send);
  const settledInteraction = (send: () => string) => settled("INTERACTION_CREATE", (d, sent) => d["id"] === sent, send);

  const answersTo = (messageId: string): PostedMessage[] => discord.posts.filter((p) => p.replyTo === messageId && p.via === "channel");
  const postedIn = (channelId: string): PostedMessage[] => discord.posts.filter((p) => p.channelId === channelId && p.via === "channel");
  const interactionPosts = (id: string): PostedMessage[] => discord.posts.filter((p) => p.interactionId === id);
  const callbacks = (id: string) => discord.calls("POST", new RegExp(`^/interactions/${id}/`));
  const typing = (channelId: string) => discord.calls("POST", new RegExp(`^/channels/${channelId}/typing$`)).length;
  const claimed = async (key: string) => (await db().eventClaim.count({ where: { key } })) === 1;

  it("holds two gateway sessions of the one bot, and each receives every event", async () => {
    expect(discord.gateway.identifies).toBe(2);
    const sessions = discord.sessions();
    expect(sessions).toHaveLength(2);
    expect(sessions.every((s) => s.connected)).toBe(true);
    await settledMessage(() => discord.sendMessage({ channelId: ch.notes, author: bob, content: "lunch anyone?" }));
    for (const s of discord.sessions()) expect(s.dispatched.filter((t) => t === "MESSAGE_CREATE").length).toBeGreaterThan(0);
    expect(discord.sessions()[0]!.dispatched).toEqual(discord.sessions()[1]!.dispatched);
  });

  it("answers a DM and a guild mention once each: one post, one model call, one stored message, one typing indicator", async () => {
    const dmChannel = discord.dmChannel(alice);
    const dm = await settledMessage(() => discord.sendDm(alice, "when do we deploy?"));
    const ask = await settledMessage(() => discord.sendMessage({ channelId: ch.general, author: bob, content: `${mention()} who is on call this week?` }));

    expect(postedIn(dmChannel).map((p) => p.content)).toEqual(["re: when do we deploy?"]);
    expect(answersTo(ask.id).map((p) => p.content)).toEqual(["re: who is on call this week?"]);
    expect(anthropic.requests).toHaveLength(2);
    const stored = await db().message.findMany({ where: { platformId: { in: [dm.id, ask.id] }, role: "user" } });
    expect(stored).toHaveLength(2);
    expect(await db().message.count({ where: { replyToId: { in: stored.map((m) => m.id) }, role: "assistant" } })).toBe(2);
    // Only the replica whose turn it was showed itself at work.
    expect(typing(dmChannel)).toBe(1);
    expect(typing(ch.general)).toBe(1);
  });

  it("answers /cairn me once, with no refusal from Discord, and a view's Delete acts once", async () => {
    const resolved = await replicas[0]!.core.history.resolve({
      platform: "discord",
      workspace: { externalId: GUILD, name: "Acme" },
      author: { externalId: alice.id, displayName: "Alice" },
      channel: { externalId: ch.general, isDm: false },
      threadId: null,
      messageId: `seed-${snowflake()}`,
      text: "",
      sentAt: new Date(),
    });
    await replicas[0]!.core.memory.apply(scopeOf(resolved), [{ action: "add", target: "user", content: "Alice prefers bullet points" }], {
      source: "tool",
      actorId: resolved.person.id,
      sourceMessageId: null,
      reason: "seeded by the test",
    });
    const entry = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: resolved.workspace.id, text: "Alice prefers bullet points" } });

    const me = await settledInteraction(() => discord.sendCommand({ user: alice, channelId: ch.general, subcommand: "me" }));
    expect(callbacks(me)).toHaveLength(1);
    const view = interactionPosts(me);
    expect(view).toHaveLength(1);
    expect(view[0]!.embeds.map((e) => e.description ?? "").join("\n")).toContain("Alice prefers bullet points");
    expect(await claimed(`discord:interaction:${me}`)).toBe(true);

    const button = view[0]!.components.flatMap((row) => row.components).find((b) => b.label === "Delete 1");
    const deleted = await settledInteraction(() => discord.click({ messageId: view[0]!.id, customId: button!.custom_id!, user: alice }));
    expect(callbacks(deleted)).toHaveLength(1);
    expect(interactionPosts(deleted).filter((p) => p.via === "followup").map((p) => p.content)).toEqual([
      "Deleted. It is gone from cairn's memory and history of changes.",
    ]);
    expect(await db().memoryEntry.findUnique({ where: { id: entry.id } })).toBeNull();
    expect(discord.refusedCallbacks).toEqual([]);
  });

  it("posts one notice for an attachments-only mention and a bare one, and one refusal where cairn may not answer", async () => {
    const files = await settledMessage(() =>
      discord.sendMessage({ channelId: ch.general, author: carol, content: mention(), attachments: [{ filename: "screenshot.png", contentType: "image/png" }] }),
    );
    const bare = await settledMessage(() => discord.sendMessage({ channelId: ch.general, author: carol, content: mention() }));
    const refused = await settledMessage(() => discord.sendMessage({ channelId: ch.closed, author: carol, content: `${mention()} what happened here?` }));

    expect(answersTo(files.id).map((p) => p.content)).toEqual([NOTICES.attachments_only]);
    expect(answersTo(bare.id).map((p) => p.content)).toEqual([NOTICES.empty]);
    expect(answersTo(refused.id).map((p) => p.content)).toEqual([REFUSED_CHANNEL_TEXT]);
    expect(anthropic.requests).toHaveLength(0);
    // Nothing of a refused message is kept; the claims are.
    expect(await db().message.count({ where: { platformId: refused.id } })).toBe(0);
    expect(await claimed(`discord:notice:${files.id}`)).toBe(true);
  });

  it("takes a 👎 on a reply as one feedback job and asks one question, in a guild and in a DM either replica has cached", async () => {
    const ask = await settledMessage(() => discord.sendMessage({ channelId: ch.notes, author: bob, content: `${mention()} summarize the notes` }));
    const [answer] = answersTo(ask.id);
    const reply = await db().delivery.findFirstOrThrow({ where: { platformId: answer!.id } });
    await settled("MESSAGE_REACTION_ADD", (d) => d["message_id"] === answer!.id, () => discord.react({ channelId: ch.notes, messageId: answer!.id, user: carol, emoji: "👎" }));

    // In a DM whose channel one replica no longer has cached: it reads the reaction from the raw
    // packet, the other through discord.js, and both name it alike.
    const dmChannel = discord.dmChannel(carol);
    await settledMessage(() => discord.sendDm(carol, "what is the release checklist?"));
    const [dmAnswer] = postedIn(dmChannel);
    replicas[1]!.adapter.client.channels.cache.delete(dmChannel);
    await settled("MESSAGE_REACTION_ADD", (d) => d["message_id"] === dmAnswer!.id, () => discord.react({ channelId: dmChannel, messageId: dmAnswer!.id, user: carol, emoji: "👎" }));
    const dmReply = await db().delivery.findFirstOrThrow({ where: { platformId: dmAnswer!.id } });

    const feedback = (await db().job.findMany({ where: { kind: "feedback" } })).map((j) => JSON.parse(j.payload) as { replyMessageId: number; emoji: string });
    expect(feedback.filter((p) => p.replyMessageId === reply.messageId)).toEqual([expect.objectContaining({ emoji: "👎" })]);
    expect(feedback.filter((p) => p.replyMessageId === dmReply.messageId)).toEqual([expect.objectContaining({ emoji: "👎" })]);

    await Promise.all(replicas.map((r) => r.core.learning.drain()));
    const question = CORRECTION_QUESTION("Carol");
    expect(discord.posts.filter((p) => p.channelId === ch.notes && p.content === question)).toHaveLength(1);
    expect(discord.posts.filter((p) => p.channelId === dmChannel && p.content === question)).toHaveLength(1);
  });
});
