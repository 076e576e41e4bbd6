/**
 * Slack's slash commands answered through the core's delivery path: the real Bolt app (HTTP mode,
 * signed requests) against the fake Slack, the real Core on the test databases. A public answer is
 * the bot's own message, stored and recorded as a delivery, so a 👎 on it is feedback like on any
 * reply; a long private answer is chunked once within Slack's limit; a command that throws is
 * answered with the core's one apology.
 */
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { SIGNING_SECRET, captureLogger, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { SLACK_NO_THREAD } from "../../src/platforms/slack/commands/slash.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { chunkText } from "../../src/ground/chunk.ts";
import { COMMAND_FAILED_REPLY } from "../../src/ground/replies.ts";
import type { Inbound } from "../../src/ground/types.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";

forEachDatabase("slack commands through the delivery path", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let adapter: SlackHandle;
  let eventsUrl: string;
  let team: string;

  const db = () => getDb().prisma;
  /** `/cairn <text>` as Slack posts it (form-encoded, signed); its response_url. */
  const slash = async (text: string, channel: string, user = "UALICE"): Promise<string> => {
    const responseUrl = slack.responseUrl();
    const body = { command: "/cairn", text, team_id: team, channel_id: channel, user_id: user, response_url: responseUrl, trigger_id: uniqueId("trig") };
    expect((await postSigned(eventsUrl, body, { contentType: "application/x-www-form-urlencoded" })).status).toBe(200);
    return responseUrl;
  };
  const responsesTo = (url: string) => slack.responses.filter((r) => url.endsWith(r.id));
  const botPosts = (channel: string) => slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
  const inbound = (channel: string, user: string): Inbound => ({
    platform: "slack",
    workspace: { externalId: team },
    author: { externalId: user },
    channel: { externalId: channel, isDm: false },
    threadId: null,
    messageId: uniqueId("m"),
    text: "",
    sentAt: new Date(),
  });

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null });
    await core.start();
    adapter = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), captureLogger("warn").log);
    eventsUrl = `http://127.0.0.1:${adapter.port}/slack/events`;
  });
  afterAll(async () => {
    await adapter?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    slack.reset();
    team = uniqueId("T");
    slack.addUser({ id: "UALICE", displayName: "Alice" });
    slack.addUser({ id: "UBOB", displayName: "Bob" });
  });

  it("posts a public answer as the bot's message, stores it with its delivery, and takes a 👎 on it as feedback", async () => {
    const channel = uniqueId("C");
    const url = await slash("new", channel);
    const [post] = await waitUntil("the public answer", () => botPosts(channel).length >= 1 && botPosts(channel), 15_000);
    expect(String(post!.args.text)).toContain("Started a new session");
    expect(responsesTo(url)).toHaveLength(0);
    const ts = slack.messages(channel).find((m) => m.user === slack.bot.userId)!.ts;
    const delivery = await waitUntil("the delivery", () => db().delivery.findFirst({ where: { channelId: channel, platformId: ts } }), 15_000);
    const stored = await db().message.findUniqueOrThrow({ where: { id: delivery.messageId } });
    expect(stored).toMatchObject({ role: "assistant", platformId: ts, sessionId: null });
    expect(stored.text).toContain("Started a new session");

    const reaction = { type: "reaction_added", user: "UBOB", reaction: "-1", item_user: slack.bot.userId, item: { type: "message", channel, ts }, event_ts: slack.nextTs() };
    expect((await postSigned(eventsUrl, eventCallback(team, reaction))).status).toBe(200);
    const job = await waitUntil(
      "the feedback job",
      async () => (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as Record<string, unknown>).find((p) => p.replyMessageId === delivery.messageId),
      15_000,
    );
    // Slack's name reaches the core as the character.
    expect(job).toMatchObject({ emoji: "👎", action: "added" });

    // So does a name with a skin tone: one signal, one character.
    const toned = { ...reaction, user: "UALICE", reaction: "thumbsdown::skin-tone-2", event_ts: slack.nextTs() };
    expect((await postSigned(eventsUrl, eventCallback(team, toned))).status).toBe(200);
    const jobs = await waitUntil(
      "the second feedback job",
      async () => {
        const all = (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as Record<string, unknown>).filter((p) => p.replyMessageId === delivery.messageId);
        return all.length === 2 ? all : null;
      },
      15_000,
    );
    expect(jobs.map((p) => p["emoji"])).toEqual(["👎", "👎"]);
  });

  it("chunks a long private answer once, within Slack's limit, and records nothing for it", async () => {
    const channel = uniqueId("C");
    const place = await core.history.resolve(inbound(channel, "UALICE"));
    await db().memoryEntry.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ workspaceId: place.workspace.id, scope: "team", kind: "rule", status: "active", source: "tool", text: `ALWAYS follow rule ${i}: ${"keep the runbook current and say so in the channel ".repeat(4)}` })),
    });
    const expected = chunkText(toMrkdwn((await core.command(inbound(channel, "UALICE"), "lessons")).text), { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY });
    expect(expected.length).toBeGreaterThanOrEqual(2);

    const url = await slash("lessons", channel);
    const parts = await waitUntil("every part", () => responsesTo(url).length >= expected.length && responsesTo(url), 15_000);
    expect(parts.map((p) => p.body.response_type)).toEqual(expected.map(() => "ephemeral"));
    expect(parts.map((p) => String(p.body.text))).toEqual(expected);
    for (const p of parts) expect(String(p.body.text).length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
    expect(botPosts(channel)).toHaveLength(0);
    expect(await db().delivery.count({ where: { channelId: channel } })).toBe(0);
  });

  it("answers `learn` alone in a channel itself: a slash command names no thread", async () => {
    const channel = uniqueId("C");
    const asked = vi.spyOn(core, "answer");
    try {
      const url = await slash("learn", channel);
      const [answer] = await waitUntil("the answer", () => responsesTo(url).length >= 1 && responsesTo(url), 15_000);
      expect(answer!.body).toMatchObject({ response_type: "ephemeral", text: toMrkdwn(SLACK_NO_THREAD) });
      expect(asked).not.toHaveBeenCalled();
      expect(botPosts(channel)).toHaveLength(0);
    } finally {
      asked.mockRestore();
    }
  });

  it("answers a command that throws with the core's apology, privately", async () => {
    // The command fails where every command starts: resolving where it was asked.
    const failing = vi.spyOn(core.history, "resolve").mockRejectedValueOnce(new Error("the store is down"));
    try {
      const channel = uniqueId("C");
      const url = await slash("me", channel);
      const [answer] = await waitUntil("the apology", () => responsesTo(url).length >= 1 && responsesTo(url), 15_000);
      expect(answer!.body).toMatchObject({ response_type: "ephemeral", text: toMrkdwn(COMMAND_FAILED_REPLY) });
      expect(botPosts(channel)).toHaveLength(0);
    } finally {
      failing.mockRestore();
    }
  });

  it("answers `forget me confirm` sent as a DM or a mention by pointing to /cairn: the model never sees it, nothing is erased", async () => {
    const asked = anthropic.requests.length;
    const dmChannel = `DUALICE${team.slice(2)}`;
    const dmTs = slack.nextTs();
    await postSigned(eventsUrl, eventCallback(team, { type: "message", channel: dmChannel, channel_type: "im", user: "UALICE", text: "forget me confirm", ts: dmTs, event_ts: dmTs }));
    const channel = uniqueId("C");
    const text = `<@${slack.bot.userId}> forget me confirm`;
    const ts = slack.seedMessage({ channel, user: "UALICE", text });
    await postSigned(eventsUrl, eventCallback(team, { type: "app_mention", channel, user: "UALICE", text, ts, event_ts: ts }));
    for (const where of [dmChannel, channel]) {
      const [post] = await waitUntil(`the pointer in ${where}`, () => botPosts(where).length >= 1 && botPosts(where), 15_000);
      expect(String(post!.args.text)).toContain("Did you mean `/cairn forget me confirm`? I did not run it");
    }
    expect(anthropic.requests.slice(asked).filter((r) => JSON.stringify(r.body).includes("forget me confirm"))).toEqual([]);
    const workspaceId = (await db().workspace.findFirstOrThrow({ where: { externalId: team } })).id;
    // Not even the first step (`forget me` asks for one) was taken.
    expect(await db().erasureRequest.count({ where: { workspaceId } })).toBe(0);
  });
});
