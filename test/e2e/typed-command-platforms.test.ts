/**
 * Commands typed without their slash, end to end on Slack and Discord (the real Bolt and discord.js
 * against the fake Slack Web API and the fake Discord, one real core, the real Anthropic SDK against
 * the fake model server). In a DM with cairn, which only its asker reads, a read-only command
 * ("skills", "lessons") is run and answered there; a changing one ("forget me confirm", "approve
 * <id>") is never run from a message, anywhere: "did you mean `/cairn …`?". In a channel or thread a
 * reply is public, so a read-only command is pointed to as well. None of it asks the model.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { SIGNING_SECRET, captureLogger, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack, type SlackCall } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import { chunkText } from "../../src/ground/chunk.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { didYouMean, typedCommand } from "../../src/ground/typed-command.ts";
import type { Inbound, Platform } from "../../src/ground/types.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";

const person = (username: string): FakeUser => ({ id: snowflake(), username, globalName: username });
const dana = person("dana");
const erin = person("erin");
const GUILD = { id: snowflake(), name: "Acme", channel: snowflake(), thread: snowflake() };

/** What cairn answers a line it points to: the pointer, worded by ground/typed-command.ts. */
function pointer(platform: Platform, line: string): string {
  const typed = typedCommand(line);
  if (!typed) throw new Error(`"${line}" is not a typed command`);
  return didYouMean(platform, typed.call);
}

forEachDatabase("commands typed as messages, on slack and discord", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let core: Core;
  let slackAdapter: SlackHandle;
  let discordAdapter: DiscordAdapter;
  let team: string;

  const db = () => getDb().prisma;
  const eventsUrl = () => `http://127.0.0.1:${slackAdapter.port}/slack/events`;
  const slackPosts = (channel: string): SlackCall[] => slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
  const slackChunks = (markdown: string) => chunkText(toMrkdwn(markdown), { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY });
  const discordPostsIn = (channel: string) => discord.posts.filter((p) => p.channelId === channel && p.via === "channel");

  /** Sends a Slack event and waits for cairn's `n`th post in `channel`; returns every post's text there. */
  async function slackSays(event: Record<string, unknown>, channel: string, n: number): Promise<string[]> {
    expect((await postSigned(eventsUrl(), eventCallback(team, event))).status).toBe(200);
    await waitUntil(`${n} posts in ${channel}`, () => slackPosts(channel).length >= n, 15_000);
    return slackPosts(channel).map((c) => String(c.args.text));
  }

  /** Seeds a profile fact for the author of `inbound`, as a turn's memory tool would write it. */
  async function remember(inbound: Inbound, fact: string): Promise<void> {
    const place = await core.history.resolve(inbound);
    await core.memory.apply(scopeOf(place), [{ action: "add", target: "user", content: fact }], { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: "seeded by the test" });
  }

  /** Nothing of `fact` was erased, and no erasure was even asked for. */
  async function stillKnown(fact: string): Promise<void> {
    expect(await db().memoryEntry.count({ where: { text: fact, status: "active" } })).toBe(1);
    expect(await db().erasureRequest.count()).toBe(0);
  }

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    discord = await startFakeDiscord({
      guilds: [{ id: GUILD.id, name: GUILD.name, channels: [{ id: GUILD.channel, name: "general" }], threads: [{ id: GUILD.thread, name: "release planning", parentId: GUILD.channel }], members: [dana, erin] }],
    });
    core = makeCore(getDb(), anthropic);
    // The bundled skills: what `skills` lists.
    await core.start();
    slackAdapter = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), captureLogger("warn").log);
    discordAdapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await slackAdapter?.stop();
    await discordAdapter?.stop();
    await slack?.close();
    await discord?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    team = uniqueId("T");
    slack.addUser({ id: "UALICE", displayName: "Alice" });
  });

  it("on Slack: in a DM, `forget me confirm` and `approve <id>` are pointed to (nothing erased), `skills` is answered; in a thread `skills` is pointed to; no model call", async () => {
    const channel = `DALICE${team.slice(2)}`;
    const dm = (text: string) => {
      const ts = slack.nextTs();
      return { type: "message", channel, channel_type: "im", user: "UALICE", text, ts, event_ts: ts };
    };
    const inbound: Inbound = { platform: "slack", workspace: { externalId: team }, author: { externalId: "UALICE" }, channel: { externalId: channel, isDm: true }, threadId: null, messageId: uniqueId("m"), text: "", sentAt: new Date() };
    await remember(inbound, "Alice drinks tea");

    let posts = await slackSays(dm("forget me confirm"), channel, 1);
    expect(posts[0]).toBe(toMrkdwn(pointer("slack", "forget me confirm")));
    expect(posts[0]).toContain("`/cairn forget me confirm`");
    await stillKnown("Alice drinks tea");

    posts = await slackSays(dm("approve cm1a2b3c4d5e"), channel, 2);
    expect(posts[1]).toBe(toMrkdwn(pointer("slack", "approve cm1a2b3c4d5e")));

    const skills = (await core.command(inbound, "skills")).text;
    expect(skills).toContain("cairn-guide");
    const parts = slackChunks(skills);
    posts = await slackSays(dm("skills"), channel, 2 + parts.length);
    expect(posts.slice(2)).toEqual(parts);

    // In a channel's thread the reply is public: pointed to, not run.
    const room = uniqueId("C");
    const text = `<@${slack.bot.userId}> skills`;
    const ts = slack.seedMessage({ channel: room, user: "UALICE", text });
    const [inThread] = await slackSays({ type: "app_mention", channel: room, user: "UALICE", text, ts, event_ts: ts }, room, 1);
    expect(inThread).toBe(toMrkdwn(pointer("slack", "skills")));
    expect(slackPosts(room)[0]!.args.thread_ts).toBe(ts);

    expect(anthropic.requests).toEqual([]);
    expect(slack.callsTo("chat.postEphemeral")).toEqual([]);
  });

  it("on Discord: in a DM, `forget me confirm` is pointed to (nothing erased), `skills` and `lessons` are answered; in a thread `skills` is pointed to; no model call", async () => {
    const channel = discord.dmChannel(dana);
    const inbound: Inbound = { platform: "discord", workspace: { externalId: `@dm:${dana.id}` }, author: { externalId: dana.id, displayName: "dana" }, channel: { externalId: channel, isDm: true }, threadId: null, messageId: `seed-${snowflake()}`, text: "", sentAt: new Date() };
    await remember(inbound, "Dana takes the late shift");
    const skills = (await core.command(inbound, "skills")).text;
    const lessons = (await core.command(inbound, "lessons")).text;

    discord.sendDm(dana, "forget me confirm");
    await waitFor(() => discordPostsIn(channel)[0], "the pointer to forget me", 15_000);
    discord.sendDm(dana, "skills");
    await waitFor(() => discordPostsIn(channel)[1], "the skill list", 15_000);
    discord.sendDm(dana, "lessons.");
    await waitFor(() => discordPostsIn(channel)[2], "the lessons", 15_000);
    await discordAdapter.idle();
    expect(discordPostsIn(channel).map((p) => p.content)).toEqual([pointer("discord", "forget me confirm"), skills, lessons]);
    expect(skills).toContain("cairn-guide");
    await stillKnown("Dana takes the late shift");

    // In a guild thread: pointed to, as a reply to the message.
    const asked = discord.sendMessage({ channelId: GUILD.thread, author: erin, content: `<@${discord.bot.id}> skills` });
    const answer = await waitFor(() => discord.posts.find((p) => p.replyTo === asked.id), "the answer in the thread", 15_000);
    await discordAdapter.idle();
    expect(answer).toMatchObject({ channelId: GUILD.thread, content: pointer("discord", "skills") });
    expect(answer.flags & 64).toBe(0);

    expect(anthropic.requests).toEqual([]);
  });
});
