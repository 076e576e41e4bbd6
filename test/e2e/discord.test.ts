/**
 * The Discord adapter end to end: the real discord.js client (gateway over a real WebSocket, REST
 * over real HTTP) against the fake Discord on 127.0.0.1, the real Core on the test databases, and
 * the real Anthropic SDK against the fake model server. Nothing in discord.js is mocked.
 *
 * Determinism: nothing sleeps to "let things happen". A test waits for what it expects (a post,
 * a job) with a bounded poll; to show that something did NOT happen it waits until the client has
 * received the dispatch (its raw event) and the adapter is idle, then looks.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { settledOn, type DispatchData } from "../support/discord-settled.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeGuild, type FakeUser, type PostedMessage } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { COMMANDS } from "../../src/ground/commands.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startDiscord, DISCORD_INTENTS, type DiscordAdapter, type DiscordSettings } from "../../src/platforms/discord/adapter.ts";
import { fencesBalanced } from "../../src/ground/chunk.ts";
import { BUTTON_ONLY, slashCommand, slashCommands, UNKNOWN_INTERACTION_REPLY } from "../../src/platforms/discord/commands/slash.ts";
import { WHY_MENU } from "../../src/platforms/discord/commands/why-menu.ts";
import { NOTICES } from "../../src/platforms/discord/events.ts";
import { registerCommands, registerSettingsFromEnv } from "../../scripts/discord-register.ts";

const GUILD = snowflake();
const OTHER_GUILD = snowflake();
const ch = {
  general: snowflake(),
  random: snowflake(),
  ops: snowflake(),
  limited: snowflake(),
  notes: snowflake(),
  drops: snowflake(),
  quiet: snowflake(),
  otherGeneral: snowflake(),
};
const thread = { planning: snowflake(), chatter: snowflake(), old: snowflake() };

const person = (username: string, globalName: string): FakeUser => ({ id: snowflake(), username, globalName });
const alice = person("alice", "Alice");
const bob = person("bob", "Bob");
const carol = person("carol", "Carol");
const dana = person("dana", "Dana");
const erin = person("erin", "Erin");
const frank = person("frank", "Frank");
const otherBot: FakeUser = { id: snowflake(), username: "deploybot", bot: true };

const GUILDS: FakeGuild[] = [
  {
    id: GUILD,
    name: "Acme",
    channels: [
      { id: ch.general, name: "general" },
      { id: ch.random, name: "random" },
      { id: ch.ops, name: "ops" },
      { id: ch.limited, name: "limited" },
      { id: ch.notes, name: "notes" },
      { id: ch.drops, name: "drops" },
      { id: ch.quiet, name: "quiet" },
    ],
    threads: [
      { id: thread.planning, name: "release planning", parentId: ch.general },
      { id: thread.chatter, name: "chatter", parentId: ch.random },
      { id: thread.old, name: "from before the restart", parentId: ch.ops },
    ],
    members: [alice, bob, carol, erin, frank, otherBot],
  },
  { id: OTHER_GUILD, name: "Globex", channels: [{ id: ch.otherGeneral, name: "general" }], members: [alice] },
];

/** The newest person message of the last user turn, without the "[Name] " label of shared conversations. */
function lastUserText(req: RecordedRequest | undefined): string {
  const last = req?.body.messages.at(-1);
  if (!last) return "";
  const text = typeof last.content === "string" ? last.content : last.content.map((b) => (b as { text?: string }).text ?? "").join("\n");
  return (text.split("\n\n").at(-1) ?? "").replace(/^\[[^\]]+\] /, "");
}

const echo = (req: RecordedRequest): Step => ({ text: `re: ${lastUserText(req)}` });

/** A ~5,000-character answer: a paragraph, a long TypeScript block, a paragraph. */
function longAnswer(): string {
  const intro = "Here is the migration script you asked for. ".repeat(10).trim();
  const code = Array.from({ length: 40 }, (_, i) => `const step${String(i).padStart(2, "0")} = await run("${"x".repeat(70)}"); // ${i}`).join("\n");
  const outro = "Run it with `node migrate.js` and check **every** step. ".repeat(8).trim();
  return `${intro}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n${outro}`;
}

forEachDatabase("discord adapter end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  const mention = () => `<@${discord.bot.id}>`;

  const settings = (fake: FakeDiscord): DiscordSettings => ({ token: fake.token, applicationId: fake.applicationId, apiUrl: fake.apiUrl });
  const answersTo = (messageId: string): PostedMessage[] => discord.posts.filter((p) => p.replyTo === messageId);
  const postsIn = (channelId: string): PostedMessage[] => discord.posts.filter((p) => p.channelId === channelId);
  /** The answer to a message as it finally reads: a tool status it showed first was edited into the answer. */
  const waitForAnswer = async (messageId: string): Promise<PostedMessage> => {
    const first = await waitFor(() => answersTo(messageId)[0], `an answer to ${messageId}`);
    await adapter.idle();
    return { ...first, content: discord.message(first.id)?.content ?? first.content };
  };
  const jobs = async () => (await core.jobs.list("feedback")).map((j) => ({ ...j, payload: JSON.parse(j.payload) as Record<string, unknown> }));

  /** Sends through `send`, then waits until the client got the dispatch and every handler it started is done. */
  const settled = <T>(t: string, pick: (d: DispatchData, sent: T) => boolean, send: () => T): Promise<T> => settledOn([adapter], t, pick, send);
  const settledMessage = (send: () => { id: string }) => settled("MESSAGE_CREATE", (d, sent) => d["id"] === sent.id, send);
  const storedReplyId = async (platformId: string) => (await getDb().prisma.delivery.findFirstOrThrow({ where: { platformId } })).messageId;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: GUILDS });
    // History from before this process started: cairn posted in this thread.
    discord.seedMessage({ channelId: thread.old, author: discord.bot, content: "an answer from yesterday" });
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null });
    await core.start();
    adapter = await startDiscord(core, settings(discord), silentLogger, { typingIntervalMs: 40, interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault(echo);
  });

  it("connects with the documented intents, JSON encoding and no compression", () => {
    const intents = DISCORD_INTENTS.reduce((n, bit) => n | bit, 0);
    expect(discord.gateway.intents).toBe(intents);
    expect(discord.gateway.identifies).toBe(1);
    expect(discord.connections[0]).toMatchObject({ path: "/gateway", query: { v: "10", encoding: "json" } });
    expect(discord.connections[0]!.query["compress"]).toBeUndefined();
    expect(adapter.client.guilds.cache.map((g) => g.name).sort()).toEqual(["Acme", "Globex"]);
  });

  it("answers a mention in a guild channel in place, typing while it works, under the guild's workspace", async () => {
    const ask = discord.sendMessage({ channelId: ch.general, author: alice, content: `${mention()} what is our deploy day?` });
    const answer = await waitForAnswer(ask.id);
    expect(answer).toMatchObject({ channelId: ch.general, content: "re: what is our deploy day?", via: "channel" });
    expect(answer.allowedMentions).toMatchObject({ parse: [] });
    // The model saw the text without the mention, labelled with the speaker's name.
    expect(JSON.stringify(anthropic.lastRequest()!.body.messages)).toContain("[Alice] what is our deploy day?");

    const typing = discord.calls("POST", new RegExp(`^/channels/${ch.general}/typing$`));
    const post = discord.calls("POST", new RegExp(`^/channels/${ch.general}/messages$`)).find((c) => c.status === 200)!;
    expect(typing.length).toBeGreaterThan(0);
    expect(typing[0]!.seq).toBeLessThan(post.seq);
    await adapter.idle();
    const typedBy = discord.calls("POST", new RegExp(`^/channels/${ch.general}/typing$`)).length;
    await new Promise((r) => setTimeout(r, 150));
    expect(discord.calls("POST", new RegExp(`^/channels/${ch.general}/typing$`)).length).toBe(typedBy);

    const db = getDb().prisma;
    const ws = await db.workspace.findFirstOrThrow({ where: { platform: "discord", externalId: GUILD } });
    expect(ws.name).toBe("Acme");
    const conv = await db.conversation.findUniqueOrThrow({ where: { key: `discord:${GUILD}:${ch.general}:main` } });
    expect(conv).toMatchObject({ workspaceId: ws.id, isDm: false, threadId: null, channelId: ch.general });

    // Discord's autocomplete may turn "@cairn" into a mention of its managed role: that counts too.
    const byRole = discord.sendMessage({ channelId: ch.general, author: bob, content: `<@&${discord.botRole(GUILD)}> and the freeze date?` });
    expect((await waitForAnswer(byRole.id)).content).toBe("re: and the freeze date?");
  });

  it("follows a reply to its message without a mention, and ignores channel messages not addressed to it", async () => {
    const ask = discord.sendMessage({ channelId: ch.random, author: alice, content: `${mention()} who owns the billing service?` });
    const first = await waitForAnswer(ask.id);
    const chatter = await settledMessage(() => discord.sendMessage({ channelId: ch.random, author: bob, content: "lunch anyone?" }));
    expect(answersTo(chatter.id)).toHaveLength(0);
    const followUp = discord.sendMessage({ channelId: ch.random, author: bob, content: "and who is on call?", replyTo: first.id });
    expect((await waitForAnswer(followUp.id)).content).toBe("re: and who is on call?");
    // One conversation: the model saw the first exchange, not the chatter.
    const sent = JSON.stringify(anthropic.lastRequest()!.body.messages);
    expect(sent).toContain("who owns the billing service?");
    expect(sent).not.toContain("lunch anyone?");
    expect(anthropic.requests.some((r) => JSON.stringify(r.body.messages).includes("lunch anyone?"))).toBe(false);
  });

  it("treats a thread as one conversation and answers there without a mention once it is in it", async () => {
    const ask = discord.sendMessage({ channelId: thread.planning, author: alice, content: `${mention()} let's plan the release` });
    expect(await waitForAnswer(ask.id)).toMatchObject({ channelId: thread.planning, content: "re: let's plan the release" });
    const next = discord.sendMessage({ channelId: thread.planning, author: bob, content: "what about the changelog?" });
    expect((await waitForAnswer(next.id)).content).toBe("re: what about the changelog?");
    expect(JSON.stringify(anthropic.lastRequest()!.body.messages)).toContain("let's plan the release");
    const conv = await getDb().prisma.conversation.findUniqueOrThrow({ where: { key: `discord:${GUILD}:${thread.planning}:${thread.planning}` } });
    expect(conv).toMatchObject({ channelId: thread.planning, threadId: thread.planning, isDm: false });

    // A thread it is not in: silence, until it is mentioned there.
    const idle = await settledMessage(() => discord.sendMessage({ channelId: thread.chatter, author: bob, content: "just chatting" }));
    expect(answersTo(idle.id)).toHaveLength(0);
    const ping = discord.sendMessage({ channelId: thread.chatter, author: bob, content: `${mention()} now you` });
    await waitForAnswer(ping.id);

    // After a restart memory is empty: the database shows cairn answered in this thread before
    // (its conversation, as an earlier run stored it), so it is followed without asking Discord.
    const earlierRun = makeCore(getDb(), anthropic);
    await earlierRun.history.placeOfPost("discord", GUILD, thread.old, thread.old, null);
    const later = discord.sendMessage({ channelId: thread.old, author: carol, content: "still there?" });
    expect((await waitForAnswer(later.id)).content).toBe("re: still there?");
    const again = discord.sendMessage({ channelId: thread.old, author: carol, content: "good" });
    await waitForAnswer(again.id);
    expect(discord.calls("GET", new RegExp(`^/channels/${thread.old}/messages$`))).toHaveLength(0);

    // A thread someone starts from one of cairn's channel replies (it gets the reply's id) is followed too.
    const inChannel = discord.sendMessage({ channelId: ch.random, author: bob, content: `${mention()} is the API frozen?` });
    const channelReply = await waitForAnswer(inChannel.id);
    const fromReply = discord.createThread({ guildId: GUILD, parentId: ch.random, name: "API freeze", id: channelReply.id, owner: bob });
    const inIt = discord.sendMessage({ channelId: fromReply, author: bob, content: "more on this please" });
    expect(await waitForAnswer(inIt.id)).toMatchObject({ channelId: fromReply, content: "re: more on this please" });
  });

  it("answers a DM end to end: every message is a turn, one conversation per person", async () => {
    const hello = discord.sendDm(dana, "hello there");
    const dmChannel = discord.dmChannel(dana);
    const answer = await waitFor(() => postsIn(dmChannel)[0], "the DM answer");
    expect(answer).toMatchObject({ content: "re: hello there", replyTo: null });
    expect(systemText(anthropic.lastRequest()!)).toContain("direct messages with Dana");
    discord.sendDm(dana, "and a second one");
    await waitFor(() => postsIn(dmChannel)[1], "the second DM answer");
    expect(JSON.stringify(anthropic.lastRequest()!.body.messages)).toContain("hello there");

    const db = getDb().prisma;
    const conv = await db.conversation.findUniqueOrThrow({ where: { key: `discord:@dm:${dana.id}:dm:${dana.id}` } });
    expect(conv).toMatchObject({ isDm: true, channelId: dmChannel });
    const stored = await db.message.findFirstOrThrow({ where: { platformId: hello.id } });
    expect(stored).toMatchObject({ role: "user", conversationId: conv.id, status: "answered" });
  });

  it("splits a 5,000-character answer with a code block into three valid messages and records every part", async () => {
    const text = longAnswer();
    expect(text.length).toBeGreaterThanOrEqual(5000);
    anthropic.enqueue({ text });
    const ask = discord.sendMessage({ channelId: ch.ops, author: carol, content: `${mention()} write the migration script` });
    const parts = await waitFor(() => postsIn(ch.ops).length >= 3 && postsIn(ch.ops), "three parts");
    await adapter.idle();
    expect(postsIn(ch.ops)).toHaveLength(3);
    for (const p of parts) {
      expect(p.content.length).toBeLessThanOrEqual(2000);
      expect(fencesBalanced(p.content)).toBe(true);
    }
    expect(parts.map((p) => p.replyTo)).toEqual([ask.id, null, null]);
    expect(parts[1]!.content.startsWith("```ts\n")).toBe(true);
    // Nothing lost: the parts, less the fences added at the cuts, are the answer.
    const rejoined = parts.map((p, i) => p.content.replace(i > 0 ? /^```ts\n/ : /^$/, "").replace(i < parts.length - 1 ? /\n```$/ : /$^/, "")).join("\n");
    expect(rejoined.replace(/\s+/g, "")).toBe(text.replace(/\s+/g, ""));
    expect(discord.calls("POST", new RegExp(`^/channels/${ch.ops}/messages$`)).every((c) => c.status === 200)).toBe(true);

    const deliveries = await getDb().prisma.delivery.findMany({ where: { channelId: ch.ops }, orderBy: { id: "asc" } });
    expect(deliveries.map((d) => d.platformId)).toEqual(parts.map((p) => p.id));
    expect(new Set(deliveries.map((d) => d.messageId)).size).toBe(1);
  });

  it("delivers a reaction on any part of a reply to the core, including on uncached messages and DMs; others are ignored", async () => {
    const ask = discord.sendMessage({ channelId: ch.notes, author: alice, content: `${mention()} summarize the notes` });
    const answer = await waitForAnswer(ask.id);
    await adapter.idle();
    const replyId = await storedReplyId(answer.id);
    const before = (await jobs()).length;

    discord.react({ channelId: ch.notes, messageId: answer.id, user: bob, emoji: "👍" });
    const added = await waitFor(async () => (await jobs()).slice(before).find((j) => j.payload["action"] === "added"), "the feedback job");
    expect(added.payload).toMatchObject({ replyMessageId: replyId, emoji: "👍", action: "added" });

    // A reaction on a person's message is not feedback.
    await settled("MESSAGE_REACTION_ADD", (d) => d["message_id"] === ask.id, () => discord.react({ channelId: ch.notes, messageId: ask.id, user: bob, emoji: "👍" }));
    expect((await jobs()).length).toBe(before + 1);

    // Removed, on a message discord.js no longer has cached (a partial), with a custom emoji.
    const notes = adapter.client.channels.cache.get(ch.notes);
    if (notes?.isTextBased()) notes.messages.cache.delete(answer.id);
    discord.react({ channelId: ch.notes, messageId: answer.id, user: carol, emoji: { id: snowflake(), name: "shipit" }, remove: true });
    const removed = await waitFor(async () => (await jobs()).slice(before).find((j) => j.payload["action"] === "removed"), "the removal job");
    expect(removed.payload).toMatchObject({ replyMessageId: replyId, emoji: "shipit" });

    // cairn's own reactions are not feedback.
    await settled("MESSAGE_REACTION_ADD", (d) => d["user_id"] === discord.bot.id, () => discord.react({ channelId: ch.notes, messageId: answer.id, user: discord.bot, emoji: "✅" }));
    expect((await jobs()).length).toBe(before + 2);

    // A DM reaction after a restart (the DM channel is not cached): discord.js drops it, the adapter does not.
    discord.sendDm(frank, "remind me of the release steps");
    const dmChannel = discord.dmChannel(frank);
    const dmAnswer = await waitFor(() => postsIn(dmChannel)[0], "the DM answer");
    await adapter.idle();
    adapter.client.channels.cache.delete(dmChannel);
    discord.react({ channelId: dmChannel, messageId: dmAnswer.id, user: frank, emoji: "👎" });
    const dmJob = await waitFor(async () => (await jobs()).find((j) => j.payload["emoji"] === "👎"), "the DM feedback job");
    expect(dmJob.payload).toMatchObject({ replyMessageId: await storedReplyId(dmAnswer.id), action: "added" });
  });

  it("answers /cairn me ephemerally, /cairn new publicly, and unknown interactions clearly", async () => {
    // /cairn me is the view (test/e2e/discord-views.test.ts): embeds, ephemeral.
    const me = discord.sendCommand({ user: alice, channelId: ch.general, subcommand: "me" });
    const private_ = await waitFor(() => discord.posts.find((p) => p.interactionId === me), "the /cairn me answer");
    expect(private_).toMatchObject({ flags: 64, via: "interaction" });
    expect(private_.embeds.map((e) => e.title).join("\n")).toContain("Your profile");
    const callback = discord.calls("POST", new RegExp(`^/interactions/${me}/`))[0]!;
    expect(callback.body).toMatchObject({ type: 4, data: { flags: 64 } });

    const fresh = discord.sendCommand({ user: alice, channelId: thread.planning, subcommand: "new" });
    const public_ = await waitFor(() => discord.posts.find((p) => p.interactionId === fresh), "the /cairn new answer");
    expect(public_.flags & 64).toBe(0);
    expect(public_.content).toContain("Started a new session");

    const forget = discord.sendCommand({ user: alice, channelId: ch.general, subcommand: "forget", options: { what: "me" } });
    expect(await waitFor(() => discord.posts.find((p) => p.interactionId === forget), "the /cairn forget answer")).toMatchObject({ flags: 64 });
    expect(discord.posts.find((p) => p.interactionId === forget)!.content).toContain("forget me confirm");

    const inDm = discord.sendCommand({ user: dana, channelId: discord.dmChannel(dana), subcommand: "skills" });
    expect(await waitFor(() => discord.posts.find((p) => p.interactionId === inDm), "the DM /cairn skills answer")).toMatchObject({ flags: 64 });

    for (const [command, subcommand] of [["weather", "now"], ["cairn", "dance"]] as const) {
      const id = discord.sendCommand({ user: bob, channelId: ch.general, command, subcommand });
      expect(await waitFor(() => discord.posts.find((p) => p.interactionId === id), `an answer to /${command} ${subcommand}`)).toMatchObject({
        content: UNKNOWN_INTERACTION_REPLY,
        flags: 64,
      });
    }
  });

  it("turns /cairn jobs options into the words typed elsewhere: run curator with dry_run is `jobs run curator --dry-run`", async () => {
    const seen: { name: string; args: readonly string[] }[] = [];
    const command = core.command.bind(core);
    core.command = (inbound, name, args = []) => {
      seen.push({ name, args });
      return command(inbound, name, args);
    };
    try {
      const list = discord.sendCommand({ user: alice, channelId: ch.general, subcommand: "jobs" });
      const listed = await waitFor(() => discord.posts.find((p) => p.interactionId === list), "the /cairn jobs answer");
      expect(listed).toMatchObject({ flags: 64 });
      expect(listed.content).toContain("**Scheduled jobs** (times in UTC)");
      const run = discord.sendCommand({ user: alice, channelId: ch.general, subcommand: "jobs", options: { run: "curator", dry_run: true } });
      const refused = await waitFor(() => discord.posts.find((p) => p.interactionId === run), "the /cairn jobs run answer");
      expect(refused).toMatchObject({ flags: 64, content: "Only cairn admins can run scheduled jobs by hand. `jobs` shows when they run next." });
    } finally {
      core.command = command;
    }
    expect(seen).toEqual([
      { name: "jobs", args: [] },
      { name: "jobs", args: ["run", "curator", "--dry-run"] },
    ]);
    const jobs = slashCommand().options!.find((o) => o.name === "jobs") as unknown as { options: { name: string; type: number; choices?: { value: string }[] }[] };
    expect(jobs.options.map((o) => [o.name, o.type, o.choices?.map((c) => c.value)])).toEqual([
      ["run", 3, ["curator", "report", "verify", "remind"]],
      ["dry_run", 5, undefined],
    ]);
  });

  it("resumes after gateway drops and answers messages sent around them exactly once", async () => {
    const ask = (text: string) => discord.sendMessage({ channelId: ch.drops, author: erin, content: `${mention()} ${text}` });
    const first = ask("before the drop");
    await waitForAnswer(first.id);

    // The link dies with a dispatch in flight: it has a sequence number the client never saw.
    discord.hold(true);
    const around = ask("around the drop");
    await discord.dropConnection("terminate");
    discord.hold(false);
    const during = ask("during the drop");
    await waitFor(() => discord.gateway.resumes === 1, "the resume");
    expect((await waitForAnswer(around.id)).content).toBe("re: around the drop");
    expect((await waitForAnswer(during.id)).content).toBe("re: during the drop");

    // A clean close with a resumable code, and a message delivered twice.
    await discord.dropConnection(4000);
    const after = ask("after the second drop");
    await waitFor(() => discord.gateway.resumes === 2, "the second resume");
    await waitForAnswer(after.id);
    await settledMessage(() => {
      discord.redispatch(around.id);
      return around;
    });

    for (const m of [first, around, during, after]) expect(answersTo(m.id)).toHaveLength(1);
    expect(discord.gateway.identifies).toBe(1);
    expect(discord.connections.at(-1)).toMatchObject({ path: "/resume", query: { v: "10", encoding: "json" } });
    expect(await getDb().prisma.message.count({ where: { platformId: { in: [first.id, around.id, during.id, after.id] } } })).toBe(4);

    // A session Discord no longer knows: RESUME is refused (op 9) and the client identifies anew.
    discord.expireSession();
    await discord.dropConnection(4000);
    // discord.js spaces identifies 5 s apart per shard: allow for it.
    await waitFor(() => discord.gateway.identifies === 2, "a new IDENTIFY", 10_000);
    expect(discord.gateway.invalidSessions).toBe(1);
    const reconnected = ask("after a reconnect");
    expect((await waitForAnswer(reconnected.id)).content).toBe("re: after a reconnect");
  });

  it("waits out a REST 429 on send and delivers the reply once", async () => {
    discord.rateLimitNext({ method: "POST", path: new RegExp(`^/channels/${ch.limited}/messages$`) }, 1, 0.05);
    const ask = discord.sendMessage({ channelId: ch.limited, author: bob, content: `${mention()} are you rate limited?` });
    await waitForAnswer(ask.id);
    await adapter.idle();
    expect(discord.calls("POST", new RegExp(`^/channels/${ch.limited}/messages$`)).map((c) => c.status)).toEqual([429, 200]);
    expect(answersTo(ask.id)).toHaveLength(1);
    const deliveries = await getDb().prisma.delivery.findMany({ where: { channelId: ch.limited } });
    expect(deliveries.map((d) => d.platformId)).toEqual([answersTo(ask.id)[0]!.id]);
  });

  it("never takes a turn for bots, including itself, nor for system messages", async () => {
    const requests = anthropic.requests.length;
    const fromBot = await settledMessage(() => discord.sendMessage({ channelId: ch.quiet, author: otherBot, content: `${mention()} deploy finished` }));
    const fromSelf = await settledMessage(() => discord.sendMessage({ channelId: ch.quiet, author: discord.bot, content: `${mention()} talking to myself` }));
    // A member-join notice (type 7) whose author is a person.
    const system = await settledMessage(() => discord.sendMessage({ channelId: ch.quiet, author: carol, content: `${mention()}`, type: 7 }));
    for (const m of [fromBot, fromSelf, system]) expect(answersTo(m.id)).toHaveLength(0);
    expect(postsIn(ch.quiet)).toHaveLength(0);
    expect(anthropic.requests.length).toBe(requests);
    expect(await getDb().prisma.message.count({ where: { platformId: { in: [fromBot.id, fromSelf.id, system.id] } } })).toBe(0);
  });

  it("answers attachments-only and empty mentions with a short notice, stays quiet in followed threads, and names attachments it cannot read", async () => {
    const requests = anthropic.requests.length;
    const dmChannel = discord.dmChannel(erin);
    discord.sendDm(erin, "", { attachments: [{ filename: "screenshot.png", contentType: "image/png" }] });
    expect((await waitFor(() => postsIn(dmChannel)[0], "the notice")).content).toBe(NOTICES.attachments_only);

    const bare = discord.sendMessage({ channelId: ch.quiet, author: bob, content: mention() });
    expect((await waitForAnswer(bare.id)).content).toBe(NOTICES.empty);

    const inThread = await settledMessage(() =>
      discord.sendMessage({ channelId: thread.planning, author: bob, content: "", attachments: [{ filename: "diagram.png" }] }),
    );
    expect(answersTo(inThread.id)).toHaveLength(0);
    expect(anthropic.requests.length).toBe(requests);

    discord.sendDm(erin, "what does this say?", { attachments: [{ filename: "report.pdf", contentType: "application/pdf" }] });
    await waitFor(() => postsIn(dmChannel)[1], "the answer with an attachment");
    expect(JSON.stringify(anthropic.lastRequest()!.body.messages)).toContain("[attached, not readable by cairn: report.pdf]");
  });

  it("keeps guilds apart: team memory learned in one guild never reaches another", async () => {
    anthropic.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "Deploys happen on Tuesdays" }] } }] },
      { text: "Noted." },
    );
    const teach = discord.sendMessage({ channelId: ch.general, author: alice, content: `${mention()} remember: deploys happen on Tuesdays` });
    expect((await waitForAnswer(teach.id)).content).toBe("Noted.");

    const elsewhere = discord.sendMessage({ channelId: ch.otherGeneral, author: alice, content: `${mention()} when do we deploy?` });
    await waitForAnswer(elsewhere.id);
    expect(systemText(anthropic.lastRequest()!)).not.toContain("Tuesdays");

    // Alice's team write is her channel's until a teammate shares it (issue 26): Bob approves it here.
    const db0 = getDb().prisma;
    const entry = await db0.memoryEntry.findFirstOrThrow({ where: { text: "Deploys happen on Tuesdays", proposedScope: "team" } });
    const approve = discord.sendCommand({ user: bob, channelId: ch.general, subcommand: "approve", options: { id: entry.id } });
    expect((await waitFor(() => discord.posts.find((p) => p.interactionId === approve), "the /cairn approve answer")).content).toContain("Shared with the whole workspace");

    // A fresh conversation in the same guild does see it (the positive control).
    const sameGuild = discord.sendMessage({ channelId: ch.quiet, author: bob, content: `${mention()} when do we deploy?` });
    await waitForAnswer(sameGuild.id);
    expect(systemText(anthropic.lastRequest()!)).toContain("Deploys happen on Tuesdays");

    const db = getDb().prisma;
    const [acme, globex] = await Promise.all([GUILD, OTHER_GUILD].map((id) => db.workspace.findFirstOrThrow({ where: { platform: "discord", externalId: id } })));
    expect(acme!.id).not.toBe(globex!.id);
  });

  it("defers /cairn learn at once and publicly, edits the answer in, and answers a refusal privately", async () => {
    const skillMd = (name: string) => `---\nname: ${name}\ndescription: Use when a release is cut\n---\n# Steps\n1. Tag it.\n`;
    let deferredFirst: boolean | null = null;
    let learnId = "";
    anthropic.enqueue(
      {
        reply: () => {
          // The model is called only once Discord has the deferral.
          deferredFirst = discord.calls("POST", new RegExp(`^/interactions/${learnId}/`)).length === 1;
          return { toolUse: [{ name: "skill_manage", input: { action: "create", name: "release-cut", content: skillMd("release-cut") } }] };
        },
      },
      { text: "saved" },
    );
    learnId = discord.sendCommand({ user: alice, channelId: ch.notes, subcommand: "learn", options: { text: "To cut a release: tag it, then push the tag" } });
    const edited = await waitFor(() => discord.posts.find((p) => p.interactionId === learnId && p.via === "edit"), "the learn answer");
    expect(deferredFirst).toBe(true);
    const deferral = discord.calls("POST", new RegExp(`^/interactions/${learnId}/`))[0]!.body as { type: number; data?: { flags?: number } };
    expect(deferral.type).toBe(5);
    expect((deferral.data?.flags ?? 0) & 64).toBe(0);
    expect(edited.content).toContain("Created `release-cut` for this channel only: Use when a release is cut");
    expect(lastUserText(anthropic.requests.at(-2))).toContain("To cut a release: tag it, then push the tag");

    const link = discord.sendCommand({ user: alice, channelId: ch.notes, subcommand: "learn", options: { text: "https://wiki.example.com/release" } });
    const privately = await waitFor(() => discord.posts.find((p) => p.interactionId === link && p.via === "followup"), "the private refusal");
    expect(privately).toMatchObject({ flags: 64, content: expect.stringContaining("paste the text instead") });
    expect(discord.posts.filter((p) => p.interactionId === link).map((p) => p.via)).toEqual(["delete", "followup"]);

    // In a thread, without text: the thread's own messages.
    const asked = discord.sendMessage({ channelId: thread.chatter, author: bob, content: `${mention()} how do we rotate the on-call pager?` });
    await waitForAnswer(asked.id);
    const before = anthropic.requests.length;
    anthropic.enqueue({ toolUse: [{ name: "skill_manage", input: { action: "create", name: "pager-rotation", content: skillMd("pager-rotation") } }] }, { text: "saved" });
    const fromThread = discord.sendCommand({ user: bob, channelId: thread.chatter, subcommand: "learn" });
    await waitFor(() => discord.posts.find((p) => p.interactionId === fromThread && p.via === "edit"), "the thread learn answer");
    expect(lastUserText(anthropic.requests[before])).toContain("how do we rotate the on-call pager?");
    const db = getDb().prisma;
    const conversation = await db.conversation.findFirstOrThrow({ where: { key: `discord:${GUILD}:${thread.chatter}:${thread.chatter}` } });
    // The public answer is stored in the thread too (its deliveries recorded), once Discord took it;
    // the source is the newest message before it.
    const answer = await waitFor(async () => (await db.message.findFirst({ where: { conversationId: conversation.id, text: { contains: "Created `pager-rotation`" } } })) ?? undefined, "the stored answer");
    const newest = await db.message.findFirstOrThrow({ where: { conversationId: conversation.id, id: { lt: answer.id } }, orderBy: { id: "desc" } });
    const skill = await db.skill.findFirstOrThrow({ where: { workspaceId: conversation.workspaceId, name: "pager-rotation" } });
    const rev = await db.revision.findFirstOrThrow({ where: { entityId: skill.id } });
    expect(rev).toMatchObject({ source: "learn", sourceMessageId: newest.id });
    expect(rev.reason).toContain(`learned from thread ${conversation.key} (https://discord.com/channels/${GUILD}/${thread.chatter}/`);
  });

  it("defers a slow command answer privately and edits it in", async () => {
    const slow = await startFakeDiscord({ guilds: GUILDS });
    // A core whose commands take 200 ms, against a 20 ms deferral threshold.
    const slowCore = makeCore(getDb(), anthropic, { bundledSkillsDir: null });
    slowCore.command = async (...args) => {
      await new Promise((r) => setTimeout(r, 200));
      return core.command(...args);
    };
    const second = await startDiscord(slowCore, settings(slow), silentLogger, { interactionDeferMs: 20 });
    try {
      const id = slow.sendCommand({ user: bob, channelId: ch.general, subcommand: "lessons" });
      const edited = await waitFor(() => slow.posts.find((p) => p.interactionId === id && p.via === "edit"), "the edited answer");
      expect(edited).toMatchObject({ flags: 64 });
      expect(edited.content).toContain("No lessons or team rules for you or this channel yet.");
      const callback = slow.calls("POST", new RegExp(`^/interactions/${id}/`))[0]!;
      expect(callback.body).toMatchObject({ type: 5, data: { flags: 64 } });
      expect(slow.calls("PATCH", new RegExp(`^/webhooks/${slow.applicationId}/[^/]+/messages/@original$`))).toHaveLength(1);
    } finally {
      await second.stop();
      await slow.close();
    }
  });

  it("fails start-up with a clear message for a wrong token or missing privileged intents", async () => {
    const strict = await startFakeDiscord({ guilds: GUILDS, privilegedIntents: false });
    try {
      await expect(startDiscord(core, { ...settings(strict), token: "not-the-token" }, silentLogger)).rejects.toThrow(/DISCORD_TOKEN \(401\)/);
      await expect(startDiscord(core, settings(strict), silentLogger)).rejects.toThrow(/MESSAGE CONTENT INTENT/);
    } finally {
      await strict.close();
    }
  });
});

describe("npm run discord:register", () => {
  let discord: FakeDiscord;
  beforeAll(async () => {
    discord = await startFakeDiscord();
  });
  afterAll(async () => {
    await discord.close();
  });

  it("PUTs the /cairn command JSON globally, or for one guild", async () => {
    const env = { DISCORD_TOKEN: discord.token, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_URL: discord.apiUrl, DISCORD_GUILD_ID: "" };
    const global = await registerCommands(registerSettingsFromEnv(env));
    expect(global).toMatchObject({ scope: "global", commands: [{ name: "cairn" }, { name: WHY_MENU }] });
    const [put] = discord.calls("PUT", new RegExp(`^/applications/${discord.applicationId}/commands$`));
    expect(put!.status).toBe(200);
    expect(put!.headers["authorization"]).toBe(`Bot ${discord.token}`);
    expect(put!.body).toEqual(JSON.parse(JSON.stringify(slashCommands())));
    const body = put!.body as { name: string; type?: number; options: { name: string; type: number }[]; contexts: number[] }[];
    expect(body[0]!.options.map((o) => o.name)).toEqual(COMMANDS.filter((c) => !BUTTON_ONLY.has(c)));
    expect(body[0]!.options.every((o) => o.type === 1)).toBe(true);
    // The message menu's command (type 3), offered where /cairn is.
    expect(body[1]).toMatchObject({ name: WHY_MENU, type: 3, contexts: body[0]!.contexts });

    const guildId = snowflake();
    const guild = await registerCommands(registerSettingsFromEnv({ ...env, DISCORD_GUILD_ID: guildId }));
    expect(guild.scope).toBe("guild");
    const [guildPut] = discord.calls("PUT", new RegExp(`^/applications/${discord.applicationId}/guilds/${guildId}/commands$`));
    expect(guildPut!.body).toEqual(put!.body);
  });

  it("names every missing or wrong setting", () => {
    expect(() => registerSettingsFromEnv({})).toThrow(/DISCORD_TOKEN[\s\S]*DISCORD_APPLICATION_ID/);
    expect(() => registerSettingsFromEnv({ DISCORD_TOKEN: "t", DISCORD_APPLICATION_ID: "123", DISCORD_API_URL: "not a url" })).toThrow(
      /DISCORD_APPLICATION_ID[\s\S]*DISCORD_API_URL/,
    );
  });
});
