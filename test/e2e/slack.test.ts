/**
 * The Slack adapter end to end: real Bolt (HTTPReceiver with v0 signatures, SocketModeReceiver over
 * a real WebSocket), the real WebClient against the fake Slack Web API, the real Core on the test
 * databases, and the real Anthropic SDK against the fake model server. Nothing in Bolt is mocked.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from "../fakes/anthropic.ts";
import {
  APP_TOKEN,
  BOT_TOKEN,
  SIGNING_SECRET,
  captureLogger,
  eventCallback,
  postSigned,
  startFakeSlack,
  waitUntil,
  type FakeSlack,
  type SlackCall,
} from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { MODEL_INTERRUPTED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { startSlack, type SlackHandle, type SlackSettings } from "../../src/platforms/slack/adapter.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import type { AdapterHost, CorePort } from "../../src/ground/adapter.ts";
import { chunkText } from "../../src/ground/chunk.ts";
import { postFailedApology } from "../../src/ground/replies.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { CONTEXT_HEADER } from "../../src/platforms/slack/replies/context.ts";
import { METHOD_SCOPES } from "../../src/platforms/slack/scopes.ts";
import { fakeSlackSettings, startBothModes } from "../support/slack-modes.ts";

/** Everything the model was sent in the last user turn, as text. */
function lastUserText(req: RecordedRequest | undefined): string {
  const last = req?.body.messages.at(-1);
  if (!last) return "";
  return typeof last.content === "string" ? last.content : last.content.map((b) => (b as { text?: string }).text ?? "").join("\n");
}

const fenceCount = (text: string) => text.split("```").length - 1;
const chunkMrkdwn = (text: string) => chunkText(text, { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY });
const APOLOGY = postFailedApology("slack");

forEachDatabase("slack adapter end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let httpMode: SlackHandle;
  let socketMode: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;
  const methodsSeen = new Set<string>();

  const settings = (extra: Partial<SlackSettings> = {}): SlackSettings => fakeSlackSettings(slack, extra);

  const send = (event: Record<string, unknown>, opts: Parameters<typeof postSigned>[2] = {}, url = eventsUrl) => postSigned(url, eventCallback(team, event), opts);
  const dm = (user: string, text: string, extra: Record<string, unknown> = {}) => {
    const ts = slack.nextTs();
    // DM channel ids are unique per test: the fake's message store outlives a test.
    return { type: "message", channel: `D${user}${team.slice(2)}`, channel_type: "im", user, text, ts, event_ts: ts, ...extra };
  };
  const posts = (channel: string): SlackCall[] => slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
  // Generous bounds: the conditions are exact, and only a failing test waits them out (the full
  // suite on two workers slows first turns to seconds).
  const waitForPosts = (channel: string, n: number, timeoutMs = 15_000) => waitUntil(`${n} posts in ${channel}`, () => posts(channel).length >= n && posts(channel), timeoutMs);
  const workspaceId = async () => (await getDb().prisma.workspace.findFirst({ where: { platform: "slack", externalId: team } }))?.id ?? "none";
  const storedMessages = async () => getDb().prisma.message.count({ where: { workspaceId: await workspaceId() } });
  const logged = (msg: string, pred: (l: Record<string, unknown>) => boolean) => waitUntil(`log "${msg}"`, () => logs.find(msg, pred).length > 0, 15_000);

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic);
    await core.start();
    ({ httpMode, socketMode, eventsUrl } = await startBothModes(core, slack, logs.log));
  });
  afterAll(async () => {
    await httpMode?.stop();
    await socketMode?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    for (const c of slack.calls) methodsSeen.add(c.method);
    anthropic.reset();
    slack.reset();
    team = uniqueId("T");
    slack.addUser({ id: "UALICE", displayName: "Alice" });
    slack.addUser({ id: "UBOB", displayName: "Bob" });
  });

  it("answers a DM end to end in HTTP mode, with 👀 while working, and records the delivery", async () => {
    anthropic.enqueue({ text: "Hello **Alice**, see [the guide](https://example.com/?a=1&b=2)." });
    const event = dm("UALICE", "hi there &amp; hello");
    const res = await send(event);
    expect(res.status).toBe(200);
    const [reply] = await waitForPosts(event.channel, 1);
    expect(reply!.args.text).toBe("Hello *Alice*, see <https://example.com/?a=1&amp;b=2|the guide>.");
    expect(reply!.args.thread_ts).toBeUndefined();
    expect(lastUserText(anthropic.lastRequest())).toContain("hi there & hello");
    expect(anthropic.systemText(anthropic.lastRequest()!)).toContain("PROFILE OF ALICE");

    // 👀 on the person's message before the answer, removed after it.
    await slack.waitFor("👀 removed", () => slack.callsTo("reactions.remove").length === 1);
    const add = slack.callsTo("reactions.add")[0]!;
    const remove = slack.callsTo("reactions.remove")[0]!;
    expect(add.args).toMatchObject({ channel: event.channel, timestamp: event.ts, name: "eyes" });
    expect(remove.args).toMatchObject({ channel: event.channel, timestamp: event.ts, name: "eyes" });
    expect(add.seq).toBeLessThan(reply!.seq);
    expect(remove.seq).toBeGreaterThan(reply!.seq);
    expect(slack.reactionsOn(event.channel, event.ts)).toEqual([]);

    const db = getDb().prisma;
    const replyTs = slack.messages(event.channel).find((m) => m.user === slack.bot.userId)!.ts;
    await logged("reply posted", (l) => l.ts === event.ts);
    const stored = await db.message.findMany({ where: { workspaceId: await workspaceId() }, orderBy: { id: "asc" } });
    expect(stored.map((m) => [m.role, m.platformId, m.status])).toEqual([
      ["user", event.ts, "answered"],
      ["assistant", replyTs, "sent"],
    ]);
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UALICE", workspace: { externalId: team } } });
    expect(person.displayName).toBe("Alice");
  });

  it("marks each part of an answer with the message it answers, so recovery finds a reply posted just before a crash", async () => {
    const channel = uniqueId("C");
    const text = `<@${slack.bot.userId}> when do we deploy?`;
    // The person's post, as Slack holds it (the thread's first message).
    const ts = slack.seedMessage({ channel, user: "UALICE", text });
    anthropic.enqueue({ text: "Deploys go out on Tuesdays." });
    await send({ type: "app_mention", channel, user: "UALICE", text, ts, event_ts: ts });
    const [answer] = await waitForPosts(channel, 1);
    expect(JSON.parse(String(answer!.args.metadata))).toEqual({ event_type: "cairn_answer", event_payload: { answers: ts } });
    expect(await httpMode.postedFor!(channel, ts, ts)).toEqual([{ id: slack.messages(channel).find((m) => m.user === slack.bot.userId)!.ts, text: "Deploys go out on Tuesdays." }]);
    expect(await httpMode.postedFor!(channel, ts, slack.nextTs())).toEqual([]);

    const event = dm("UBOB", "and in a DM?");
    anthropic.enqueue({ text: "Same days." });
    await send(event);
    await waitForPosts(event.channel, 1);
    expect((await httpMode.postedFor!(event.channel, null, event.ts)).map((p) => p.text)).toEqual(["Same days."]);
  });

  it("answers a channel mention in its thread, follows the thread without a new mention, and ignores unaddressed posts", async () => {
    const channel = uniqueId("C");
    const ts = slack.nextTs();
    anthropic.enqueue({ text: "Deploys go out on Tuesdays." });
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> when do we deploy?`, ts, event_ts: ts });
    const [first] = await waitForPosts(channel, 1);
    expect(first!.args).toMatchObject({ thread_ts: ts, text: "Deploys go out on Tuesdays." });
    expect(lastUserText(anthropic.lastRequest())).toBe("[Alice] when do we deploy?");
    // A top-level post: no reply, no thread to read.
    expect(slack.callsTo("conversations.replies")).toHaveLength(0);

    anthropic.enqueue({ text: "Yes, Thursdays too." });
    const followUp = slack.nextTs();
    await send({ type: "message", channel, channel_type: "channel", user: "UBOB", text: "and on Thursdays?", ts: followUp, thread_ts: ts, event_ts: followUp });
    const [, second] = await waitForPosts(channel, 2);
    expect(second!.args).toMatchObject({ thread_ts: ts, text: "Yes, Thursdays too." });
    expect(JSON.stringify(anthropic.lastRequest()!.body.messages)).toContain("[Bob] and on Thursdays?");

    // A post in the channel that does not mention cairn, and a reply in a thread it is not in.
    const loose = slack.nextTs();
    const other = slack.nextTs();
    await send({ type: "message", channel, channel_type: "channel", user: "UBOB", text: "lunch?", ts: loose, event_ts: loose });
    await send({ type: "message", channel, channel_type: "channel", user: "UBOB", text: "reply elsewhere", ts: other, thread_ts: loose, event_ts: other });
    await logged("message dropped", (l) => l.ts === other && l.reason === "not_addressed");
    expect(logs.find("message dropped", (l) => l.reason === "not_addressed" && l.eventType === "message").length).toBeGreaterThanOrEqual(2);
    expect(posts(channel)).toHaveLength(2);
    expect(anthropic.requests).toHaveLength(2);
  });

  it("answers the message + app_mention pair and three retries exactly once, also after a restart", async () => {
    const channel = uniqueId("C");
    const ts = slack.nextTs();
    const text = `<@${slack.bot.userId}> summarize the incident`;
    const message = { type: "message", channel, channel_type: "channel", user: "UALICE", text, ts, event_ts: ts };
    const mention = { type: "app_mention", channel, user: "UALICE", text, ts, event_ts: ts };
    // The model answers only once every delivery was acknowledged: had the adapter held an HTTP
    // response until the answer, this would never resolve (and the test would time out).
    let acked!: () => void;
    const allAcked = new Promise<void>((resolve) => (acked = resolve));
    anthropic.setDefault({ reply: async () => (await allAcked, { text: "Summary: all good." }) });
    const mentionBody = eventCallback(team, mention, { eventId: "EvMENTION1" });
    const results = await Promise.all([
      postSigned(eventsUrl, eventCallback(team, message, { eventId: "EvMESSAGE1" })),
      postSigned(eventsUrl, mentionBody),
      postSigned(eventsUrl, mentionBody, { retryNum: 1 }),
      postSigned(eventsUrl, mentionBody, { retryNum: 2 }),
      postSigned(eventsUrl, mentionBody, { retryNum: 3, retryReason: "timeout" }),
    ]);
    acked();
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await waitForPosts(channel, 1);
    await waitUntil("4 duplicates dropped", () => logs.find("duplicate delivery dropped", (l) => l.ts === ts).length === 4);
    await slack.waitFor("👀 removed", () => slack.callsTo("reactions.remove").length === 1);
    expect(posts(channel)).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(1);
    expect(await storedMessages()).toBe(2);

    // A restarted cairn has forgotten the event in memory; the stored message still makes it once,
    // and the thread it answered in is still followed (derived from the database).
    const restartedCore = makeCore(getDb(), anthropic);
    const restarted = await startSlack(restartedCore, settings({ signingSecret: SIGNING_SECRET }), logs.log);
    try {
      const url = `http://127.0.0.1:${restarted.port}/slack/events`;
      expect((await postSigned(url, mentionBody, { retryNum: 3 })).status).toBe(200);
      await waitUntil("the stored copy dropped", () => logs.find("duplicate delivery dropped", (l) => l.ts === ts).length === 5);
      expect(posts(channel)).toHaveLength(1);

      anthropic.setDefault({ text: "Follow-up answered." });
      const followUp = slack.nextTs();
      await send({ type: "message", channel, channel_type: "channel", user: "UBOB", text: "anything else?", ts: followUp, thread_ts: ts, event_ts: followUp }, {}, url);
      const [, answer] = await waitForPosts(channel, 2);
      expect(answer!.args).toMatchObject({ thread_ts: ts, text: "Follow-up answered." });
    } finally {
      await restarted.stop();
    }
  });

  it("reads a thread's earlier messages when first mentioned inside it, and only then", async () => {
    const channel = uniqueId("C");
    const parent = slack.seedMessage({ channel, user: "UALICE", text: "The build on main is red since this morning" });
    slack.seedMessage({ channel, user: "UBOB", text: "I think it's the <https://ci.example.com/42|flaky test>", thread_ts: parent });
    slack.seedMessage({ channel, bot_id: "BCI", text: "CI: job 42 failed", thread_ts: parent, subtype: "bot_message" });
    const ts = slack.seedMessage({ channel, user: "UALICE", text: `<@${slack.bot.userId}> what do you think?`, thread_ts: parent });
    anthropic.enqueue({ text: "Looks like the flaky test." });
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> what do you think?`, ts, thread_ts: parent, event_ts: ts });
    await waitForPosts(channel, 1);
    const replies = slack.callsTo("conversations.replies");
    expect(replies).toHaveLength(1);
    expect(replies[0]!.args).toMatchObject({ channel, ts: parent, limit: "50", latest: ts });
    const seen = lastUserText(anthropic.lastRequest());
    expect(seen).toContain(CONTEXT_HEADER);
    expect(seen).toContain("Alice: The build on main is red since this morning");
    expect(seen).toContain("Bob: I think it's the flaky test (https://ci.example.com/42)");
    expect(seen).toContain("CI: job 42 failed");
    expect(seen.trim().endsWith("what do you think?")).toBe(true);
    expect(posts(channel)[0]!.args.thread_ts).toBe(parent);

    anthropic.enqueue({ text: "Retry it." });
    const again = slack.nextTs();
    await send({ type: "app_mention", channel, user: "UBOB", text: `<@${slack.bot.userId}> should I retry?`, ts: again, thread_ts: parent, event_ts: again });
    await waitForPosts(channel, 2);
    expect(slack.callsTo("conversations.replies")).toHaveLength(1);
    expect(lastUserText(anthropic.lastRequest())).not.toContain(CONTEXT_HEADER);
  });

  it("answers a DM in Socket Mode: the envelope is acked once the message is stored, and the answer posted", async () => {
    anthropic.enqueue({ text: "Hi from the socket." });
    const event = dm("UBOB", "hello over the socket");
    const id = slack.pushEnvelope("events_api", eventCallback(team, event));
    const ack = await slack.waitForAck(id);
    expect(ack.payload).toEqual({});
    // Acknowledged only once the message is stored: Slack never delivers an acknowledged envelope
    // again, so a crash after the ack must find the message in the database.
    expect(await getDb().prisma.message.count({ where: { platformId: event.ts, role: "user" } })).toBe(1);
    const [reply] = await waitForPosts(event.channel, 1);
    expect(reply!.args.text).toBe("Hi from the socket.");
    expect(ack.at).toBeLessThanOrEqual(reply!.at);
    expect(lastUserText(anthropic.lastRequest())).toBe("hello over the socket");
  });

  it("delivers a reaction on a bot reply to the core as feedback, and ignores reactions on other messages", async () => {
    anthropic.enqueue({ text: "Use the blue button." });
    const event = dm("UALICE", "how do I deploy?");
    await send(event);
    const [reply] = await waitForPosts(event.channel, 1);
    const replyTs = (await slack.waitFor("reply ts", () => slack.messages(event.channel).find((m) => m.user === slack.bot.userId)))!.ts;
    const db = getDb().prisma;
    const stored = await waitUntil("delivery recorded", async () => db.delivery.findFirst({ where: { platformId: replyTs, workspaceId: await workspaceId() } }));
    expect(reply!.args.text).toBe("Use the blue button.");

    const reaction = (over: Record<string, unknown>) => {
      const ts = slack.nextTs();
      return { type: "reaction_added", user: "UALICE", reaction: "+1::skin-tone-2", item_user: slack.bot.userId, item: { type: "message", channel: event.channel, ts: replyTs }, event_ts: ts, ...over };
    };
    // On the person's own message, and on a bot message that is not a reply: neither is feedback.
    await send(reaction({ item_user: "UALICE", item: { type: "message", channel: event.channel, ts: event.ts } }));
    const notReply = slack.seedMessage({ channel: event.channel, user: slack.bot.userId, bot_id: slack.bot.botId, text: "not a reply" });
    await send(reaction({ item: { type: "message", channel: event.channel, ts: notReply } }));
    await logged("reaction ignored", (l) => l.target === event.ts && l.reason === "not_on_bot_message");
    await logged("reaction ignored", (l) => l.target === notReply && l.reason === "not_a_reply");

    // Through the socket, the way most installs receive it.
    const id = slack.pushEnvelope("events_api", eventCallback(team, reaction({})));
    await slack.waitForAck(id);
    const job = await waitUntil("a feedback job", async () => {
      const jobs = await core.jobs.list("feedback");
      return jobs.find((j) => (JSON.parse(j.payload) as { replyMessageId: number }).replyMessageId === stored.messageId);
    });
    // "+1::skin-tone-2" reaches the core as the character.
    expect(JSON.parse(job.payload)).toMatchObject({ replyMessageId: stored.messageId, emoji: "👍", action: "added" });
    const reactor = await db.person.findFirstOrThrow({ where: { externalId: "UALICE", workspace: { externalId: team } } });
    expect(JSON.parse(job.payload)).toMatchObject({ reactorId: reactor.id });

    const removed = reaction({ type: "reaction_removed", reaction: "tada" });
    await send(removed);
    await logged("reaction recorded as feedback", (l) => l.target === replyTs && l.action === "removed");
    const mine = (await core.jobs.list("feedback")).filter((j) => (JSON.parse(j.payload) as { replyMessageId: number }).replyMessageId === stored.messageId);
    expect(mine.map((j) => (JSON.parse(j.payload) as { emoji: string; action: string }).action)).toEqual(["added", "removed"]);
  });

  it("refuses a forged or stale signature with 401 and stores nothing", async () => {
    const event = dm("UALICE", "forged hello");
    const forged = await send(event, { secret: "not-the-secret" });
    const garbage = await send(event, { signature: "v0=deadbeef" });
    const stale = await send(event, { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 });
    expect([forged.status, garbage.status, stale.status]).toEqual([401, 401, 401]);
    // The same event, correctly signed, is then answered: proof the refusals were the signature's.
    anthropic.enqueue({ text: "genuine" });
    expect(await storedMessages()).toBe(0);
    await send(event);
    await waitForPosts(event.channel, 1);
    expect(await storedMessages()).toBe(2);
  });

  it("retries a 429 from chat.postMessage after Retry-After and delivers once", async () => {
    slack.rateLimit("chat.postMessage", 1, 1);
    anthropic.enqueue({ text: "Worth the wait." });
    const event = dm("UBOB", "rate limit me");
    await send(event);
    await waitForPosts(event.channel, 1);
    const attempts = slack.calls.filter((c) => c.method === "chat.postMessage" && c.args.channel === event.channel);
    expect(attempts.map((c) => c.status)).toEqual([429, 200]);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
    expect(posts(event.channel).map((c) => c.args.text)).toEqual(["Worth the wait."]);
    await logged("reply posted", (l) => l.ts === event.ts && l.parts === 1);
  });

  it("streams a long Markdown answer: a status while a tool runs, then well-formed mrkdwn chunks in the thread", async () => {
    const channel = uniqueId("C");
    const code = Array.from({ length: 140 }, (_, i) => `  step_${i} = run("deploy <${i}>") && check()`).join("\n");
    const para = (i: number) => `Paragraph ${i}: **note** that deploys & rollbacks ${"take care and patience ".repeat(12)}`;
    const long = ["# Deploy guide", ...Array.from({ length: 8 }, (_, i) => para(i)), "```python", code, "```", ...Array.from({ length: 8 }, (_, i) => para(i + 8)), "- last **point**"].join("\n\n");
    anthropic.enqueue({ toolUse: [{ name: "skills_list", input: {} }] }, { delayMs: 150, then: { text: long } });
    const ts = slack.nextTs();
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> write the deploy guide`, ts, event_ts: ts });
    await logged("reply posted", (l) => l.ts === ts);

    const placeholder = posts(channel)[0]!;
    expect(placeholder.args.text).toMatch(/^⏳ _.+…_$/);
    const updates = slack.callsTo("chat.update").filter((c) => c.args.channel === channel);
    const final = updates.at(-1)!;
    expect(final.args.ts).toBe(slack.messages(channel)[0]!.ts);
    const parts = [String(final.args.text), ...posts(channel).slice(1).map((c) => String(c.args.text))];
    expect(parts.length).toBeGreaterThanOrEqual(4);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
      expect(fenceCount(part) % 2).toBe(0);
    }
    expect(parts[0]!.startsWith("*Deploy guide*")).toBe(true);
    const joined = parts.join("\n");
    expect(joined).toContain("*note* that deploys &amp; rollbacks");
    expect(joined).toContain('step_139 = run("deploy &lt;139&gt;") &amp;&amp; check()');
    expect(joined).not.toContain("**");
    expect(joined).toContain("• last *point*");
    // The code block was split across messages: closed at the end of one, reopened at the next.
    expect(parts.some((p, i) => i > 0 && p.startsWith("```") && parts[i - 1]!.endsWith("```"))).toBe(true);
    expect(posts(channel).every((c) => c.args.thread_ts === ts)).toBe(true);

    const reply = await getDb().prisma.message.findFirstOrThrow({ where: { role: "assistant", workspaceId: await workspaceId() } });
    const deliveries = await getDb().prisma.delivery.findMany({ where: { messageId: reply.id }, orderBy: { id: "asc" } });
    expect(deliveries.map((d) => d.platformId)).toEqual(slack.messages(channel).map((m) => m.ts));
  });

  /** A Markdown answer of about three Slack messages, with a code block across a message boundary. */
  const longAnswer = (): string => {
    const code = Array.from({ length: 90 }, (_, i) => `  step_${i} = run("deploy <${i}>") && check()`).join("\n");
    const para = (i: number) => `Paragraph ${i}: **note** that deploys & rollbacks ${"take care and patience ".repeat(12)}`;
    return ["# Deploy guide", ...Array.from({ length: 10 }, (_, i) => para(i)), "```python", code, "```", ...Array.from({ length: 6 }, (_, i) => para(i + 10)), "- last **point**"].join("\n\n");
  };
  /** What the thread finally shows of the bot's messages, in order. */
  const botTexts = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.bot.userId);
  /** Every text the bot put on screen in `channel`, posted or edited, with the message it went to. */
  const shownTexts = (channel: string) =>
    slack.calls
      .filter((c) => c.ok && (c.method === "chat.postMessage" || c.method === "chat.update") && c.args.channel === channel)
      .map((c) => ({ method: c.method, ts: String(c.args.ts ?? ""), text: String(c.args.text), at: c.at }));

  it("streams a long answer: posted early, edited as it grows at most once per interval, finished with the rendered answer", async () => {
    const intervalMs = 250;
    // Its own adapter, so the rate bound is wide enough to see against the model's 40 ms deltas.
    const paced = await startSlack(core, settings({ signingSecret: SIGNING_SECRET, progressIntervalMs: intervalMs }), logs.log);
    try {
      const channel = uniqueId("C");
      const answer = longAnswer();
      const pieces = 40;
      anthropic.enqueue({ text: answer, pieces, intervalMs: 40 });
      const ts = slack.nextTs();
      await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> write the deploy guide`, ts, event_ts: ts }, {}, `http://127.0.0.1:${paced.port}/slack/events`);
      await anthropic.waitForRequests(1);
      const asked = Date.now();
      await logged("reply posted", (l) => l.ts === ts);

      const expected = chunkMrkdwn(toMrkdwn(answer));
      expect(expected.length).toBeGreaterThanOrEqual(3);
      // The thread ends with exactly the rendered answer: drafts replaced, none left behind.
      const final = botTexts(channel);
      expect(final.map((m) => m.text)).toEqual(expected);
      expect(final.every((m) => m.thread_ts === ts)).toBe(true);
      const reply = await getDb().prisma.message.findFirstOrThrow({ where: { role: "assistant", workspaceId: await workspaceId() } });
      const deliveries = await getDb().prisma.delivery.findMany({ where: { messageId: reply.id }, orderBy: { id: "asc" } });
      expect(deliveries.map((d) => d.platformId)).toEqual(final.map((m) => m.ts));

      // Posted early: the first part went up as a draft while the model was still writing
      // (40 deltas 40 ms apart take 1.5 s or more), then grew through edits.
      const shown = shownTexts(channel);
      const first = shown[0]!;
      expect(first.method).toBe("chat.postMessage");
      expect(first.at - asked).toBeLessThan((pieces - 1) * 40);
      expect(first.text.length).toBeLessThan(expected[0]!.length);
      expect(first.text.startsWith("*Deploy guide*")).toBe(true);
      const updates = shown.filter((c) => c.method === "chat.update");
      expect(updates.length).toBeGreaterThanOrEqual(2);
      // Every draft is well-formed on its own: under the limit, code fences balanced.
      for (const c of shown) {
        expect(c.text.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
        expect(fenceCount(c.text) % 2).toBe(0);
      }
      expect(shown.some((c) => c.text.includes("step_") && !expected.includes(c.text))).toBe(true);

      // Rate-bounded: far fewer edits than deltas, and edits of one message at least an interval
      // apart (the last one, the final answer, goes out at once).
      expect(updates.length).toBeLessThan(pieces / 2);
      const draftCalls = shown.length - expected.length;
      const span = shown.at(-1)!.at - first.at;
      expect(draftCalls).toBeLessThanOrEqual(2 * (Math.floor(span / intervalMs) + 1));
      const byMessage = new Map<string, number[]>();
      for (const u of updates) byMessage.set(u.ts, [...(byMessage.get(u.ts) ?? []), u.at]);
      for (const times of byMessage.values()) {
        const drafts = times.slice(0, -1);
        for (let i = 1; i < drafts.length; i++) expect(drafts[i]! - drafts[i - 1]!).toBeGreaterThanOrEqual(intervalMs * 0.75);
      }
    } finally {
      await paced.stop();
    }
  });

  it("shows a preamble, replaces it with the tool's status, then streams the answer into the same message", async () => {
    const channel = uniqueId("C");
    anthropic.enqueue(
      { text: "Let me look at the skills first.", toolUse: [{ name: "skills_list", input: {} }], pieces: 4, intervalMs: 60 },
      // The next call takes a while to its first token, as real ones do: the status has time to show.
      // (Were it quicker than an interval, the status would be skipped for the newer draft.)
      { delayMs: 200, then: { text: "We have a **deploy** skill; it covers canaries and rollbacks.", pieces: 4, intervalMs: 60 } },
    );
    const ts = slack.nextTs();
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> what skills do we have?`, ts, event_ts: ts });
    await logged("reply posted", (l) => l.ts === ts);

    const final = botTexts(channel);
    expect(final.map((m) => m.text)).toEqual(["We have a *deploy* skill; it covers canaries and rollbacks."]);
    const shown = shownTexts(channel);
    // One message throughout: the preamble as a draft, the status over it, the answer over that.
    expect(shown.filter((c) => c.method === "chat.postMessage")).toHaveLength(1);
    expect(shown.slice(1).every((c) => c.ts === final[0]!.ts)).toBe(true);
    const texts = shown.map((c) => c.text);

    const preamble = texts.findIndex((t) => t.startsWith("Let me"));
    const status = texts.findIndex((t) => /^⏳ _.+…_$/.test(t));
    const drafting = texts.findIndex((t, i) => i > status && t.startsWith("We have"));
    expect(preamble).toBe(0);
    expect(status).toBeGreaterThan(preamble);
    expect(drafting).toBeGreaterThan(status);
    // The preamble was never part of the answer.
    expect(texts.slice(status).some((t) => t.includes("Let me"))).toBe(false);
  });

  it("replaces a draft cut short by the model with the apology and deletes the draft's other parts", async () => {
    const channel = uniqueId("C");
    const answer = longAnswer();
    anthropic.enqueue({ streamThenFail: answer.slice(0, Math.floor(answer.length * 0.8)), pieces: 20, intervalMs: 30 }, { text: "never asked: no retry after text" });
    const ts = slack.nextTs();
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> write the deploy guide`, ts, event_ts: ts });
    await logged("reply posted", (l) => l.ts === ts);

    expect(anthropic.requests).toHaveLength(1);
    const drafts = posts(channel);
    expect(drafts.length).toBeGreaterThanOrEqual(2);
    const final = botTexts(channel);
    expect(final.map((m) => m.text)).toEqual([MODEL_INTERRUPTED_REPLY]);
    // Every draft part but the first (which now carries the apology) was deleted.
    const deleted = slack.callsTo("chat.delete").filter((c) => c.args.channel === channel);
    expect(deleted).toHaveLength(drafts.length - 1);
    expect(deleted.map((c) => c.args.ts)).not.toContain(final[0]!.ts);
    const reply = await getDb().prisma.message.findFirstOrThrow({ where: { role: "assistant", workspaceId: await workspaceId() } });
    expect(reply.status).toBe("failed");
    const deliveries = await getDb().prisma.delivery.findMany({ where: { messageId: reply.id } });
    expect(deliveries.map((d) => d.platformId)).toEqual([final[0]!.ts]);
  });

  it("never starts a turn for bot messages, its own messages, edits, deletions or other subtypes", async () => {
    slack.addUser({ id: "UBOTUSER", displayName: "Zapier", isBot: true });
    const channel = `DUALICE${team.slice(2)}`;
    const events = [
      dm("UALICE", "from another bot", { bot_id: "BOTHER", subtype: "bot_message" }),
      dm("UALICE", "bot with a user", { bot_id: "BOTHER" }),
      dm(slack.bot.userId, "my own answer"),
      dm("UBOTUSER", "an app posting as a user"),
      dm("UALICE", "", { subtype: "message_changed", message: { text: "edited" } }),
      dm("UALICE", "", { subtype: "message_deleted", deleted_ts: "1.2" }),
      dm("UALICE", "joined", { subtype: "channel_join" }),
    ];
    for (const e of events) expect((await send({ ...e, channel })).status).toBe(200);
    // Every one is dropped and says why; the bot's own message is dropped by Bolt's ignoreSelf first.
    const reasonOf = (ts: string) => logs.find("message dropped", (l) => l.ts === ts)[0]?.reason;
    const expected = ["bot", "bot", undefined, "bot", "edit", "subtype", "subtype"];
    await waitUntil("drops logged", () => events.every((e, i) => expected[i] === undefined || reasonOf(e.ts) === expected[i]));

    // A real message after them is answered: everything before it was handled and nothing answered.
    anthropic.enqueue({ text: "only this one" });
    const real = dm("UALICE", "a person, finally");
    await send({ ...real, channel });
    await waitForPosts(channel, 1);
    expect(posts(channel).map((c) => c.args.text)).toEqual(["only this one"]);
    expect(anthropic.requests).toHaveLength(1);
    expect(await storedMessages()).toBe(2);
  });

  it("answers /cairn me ephemerally (Socket Mode) and /cairn help (HTTP), acknowledged first", async () => {
    anthropic.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Prefers short answers" }] } }] }, { text: "Noted." });
    const event = dm("UALICE", "I prefer short answers");
    await send(event);
    // Not the first post: the memory tool's status line comes before the answer.
    await logged("reply posted", (l) => l.ts === event.ts);

    const responseUrl = slack.responseUrl();
    const id = slack.pushEnvelope("slash_commands", {
      token: "unused",
      team_id: team,
      channel_id: event.channel,
      channel_name: "directmessage",
      user_id: "UALICE",
      user_name: "alice",
      command: "/cairn",
      text: "me",
      response_url: responseUrl,
      trigger_id: "trig-1",
      api_app_id: "AFAKEAPP",
    });
    const ack = await slack.waitForAck(id);
    const answer = await slack.waitFor("the response_url post", () => slack.responses.find((r) => responseUrl.endsWith(r.id)));
    expect(ack.at).toBeLessThanOrEqual(answer.at);
    expect(answer.body.response_type).toBe("ephemeral");
    expect(String(answer.body.text)).toContain("*Your profile*");
    expect(String(answer.body.text)).toContain("Prefers short answers");
    expect(slack.callsTo("chat.postMessage").filter((c) => String(c.args.text).includes("Your profile"))).toHaveLength(0);

    const helpUrl = slack.responseUrl();
    const res = await postSigned(
      eventsUrl,
      { command: "/cairn", text: "", team_id: team, channel_id: "CGENERAL", user_id: "UBOB", response_url: helpUrl, trigger_id: "trig-2" },
      { contentType: "application/x-www-form-urlencoded" },
    );
    expect(res.status).toBe(200);
    const help = await slack.waitFor("help answer", () => slack.responses.find((r) => helpUrl.endsWith(r.id)));
    expect(help.body).toMatchObject({ response_type: "ephemeral" });
    expect(String(help.body.text)).toContain("remembers what your team teaches it");
  });

  it("acknowledges /cairn learn before the model is called and posts its answer in the channel; @cairn learn in a thread learns from it", async () => {
    const skillMd = "---\nname: deploy-rollback\ndescription: Use when a deploy must be rolled back\n---\n# Steps\n1. Run `deployctl rollback`.\n";
    const create = { toolUse: [{ name: "skill_manage", input: { action: "create", name: "deploy-rollback", content: skillMd } }] };
    const responseUrl = slack.responseUrl();
    let envelope = "";
    let ackedFirst: boolean | null = null;
    anthropic.setDefault(() => {
      ackedFirst ??= slack.acks.some((a) => a.envelope_id === envelope);
      return { text: "done" };
    });
    anthropic.enqueue({
      reply: () => {
        ackedFirst = slack.acks.some((a) => a.envelope_id === envelope);
        return create;
      },
    });
    const channel = uniqueId("C");
    envelope = slack.pushEnvelope("slash_commands", {
      team_id: team,
      channel_id: channel,
      user_id: "UALICE",
      command: "/cairn",
      text: "learn How we roll back:\n1. deployctl rollback api\n2. tell #ops",
      response_url: responseUrl,
      trigger_id: "trig-learn",
    });
    // Public: the bot's own message in the channel (not the response_url, which gives no ts to record).
    const [answer] = await waitForPosts(channel, 1);
    // The model was called only after Slack had its acknowledgement.
    expect(ackedFirst).toBe(true);
    expect(lastUserText(anthropic.requests[0])).toContain("1. deployctl rollback api\n2. tell #ops");
    expect(answer!.args.thread_ts).toBeUndefined();
    expect(String(answer!.args.text)).toContain("Created `deploy-rollback` for this channel only: Use when a deploy must be rolled back");
    expect(slack.responses.filter((r) => responseUrl.endsWith(r.id))).toHaveLength(0);
    const db = getDb().prisma;
    const skill = await db.skill.findFirstOrThrow({ where: { workspaceId: await workspaceId(), name: "deploy-rollback" } });
    const alice = await db.person.findFirstOrThrow({ where: { externalId: "UALICE", workspaceId: await workspaceId() } });
    expect(await db.revision.findFirst({ where: { entityId: skill.id } })).toMatchObject({ source: "learn", actorId: alice.id });

    // A thread: learned from by mentioning cairn in it (Slack's slash commands name no thread).
    anthropic.reset();
    const root = slack.nextTs();
    anthropic.enqueue({ text: "Staging is reset with `envctl reset staging`." });
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> how do I reset staging?`, ts: root, event_ts: root });
    // The first post in the channel is the learn command's public answer.
    await waitForPosts(channel, 2);
    const learnTs = slack.nextTs();
    const staging = skillMd.replace(/deploy-rollback/g, "staging-reset").replace("a deploy must be rolled back", "staging must be reset");
    anthropic.enqueue({ toolUse: [{ name: "skill_manage", input: { action: "create", name: "staging-reset", content: staging } }] }, { text: "saved" });
    const mention = { channel, user: "UBOB", text: `<@${slack.bot.userId}> learn`, ts: learnTs, thread_ts: root, event_ts: learnTs };
    // Slack sends a mention twice: as a message and as app_mention. It is learned from once.
    await send({ type: "message", channel_type: "channel", ...mention });
    await send({ type: "app_mention", ...mention });
    const [, , learned] = await waitForPosts(channel, 3);
    expect(learned!.args).toMatchObject({ thread_ts: root });
    expect(String(learned!.args.text)).toContain("Created `staging-reset`");
    await logged("learn from a thread answered", (l) => l.channel === channel);
    await logged("duplicate learn mention dropped", (l) => l.channel === channel);
    expect(anthropic.requests).toHaveLength(3);
    expect(lastUserText(anthropic.requests[1])).toContain("[Alice] how do I reset staging?");
    const conversation = await db.conversation.findFirstOrThrow({ where: { key: `slack:${team}:${channel}:${root}` } });
    // The public answer is stored in the thread too (its deliveries recorded), once Slack took it;
    // the source is the newest message before it.
    const learnAnswer = await waitUntil("the stored answer", () => db.message.findFirst({ where: { conversationId: conversation.id, text: { contains: "Created `staging-reset`" } } }).then((m) => m ?? undefined), 15_000);
    const newest = await db.message.findFirstOrThrow({ where: { conversationId: conversation.id, id: { lt: learnAnswer.id } }, orderBy: { id: "desc" } });
    const learnedSkill = await db.skill.findFirstOrThrow({ where: { workspaceId: await workspaceId(), name: "staging-reset" } });
    const rev = await db.revision.findFirstOrThrow({ where: { entityId: learnedSkill.id } });
    expect(rev).toMatchObject({ source: "learn", sourceMessageId: newest.id });
    expect(rev.reason).toContain(`learned from thread ${conversation.key}`);
    // The mention was a command, not a turn: nothing of it is stored.
    expect(await db.message.count({ where: { conversationId: conversation.id, platformId: learnTs } })).toBe(0);
  });

  it("posts the polite apology when the model is unreachable, and apologises when Slack refuses the answer", async () => {
    anthropic.failForever(529);
    const event = dm("UBOB", "are you there?");
    await send(event);
    const [reply] = await waitForPosts(event.channel, 1);
    expect(reply!.args.text).toBe(MODEL_UNAVAILABLE_REPLY);
    anthropic.clearFailure();

    // Refused by its text, not by order: on a slow run the answer may first go up as a draft, and
    // Slack must refuse that post as well as the final one.
    slack.failNext("chat.postMessage", "msg_too_long", Number.POSITIVE_INFINITY, (args) => args.text === "an answer Slack refuses");
    anthropic.enqueue({ text: "an answer Slack refuses" });
    const second = dm("UBOB", "try again");
    await send(second);
    await waitForPosts(event.channel, 2);
    expect(posts(event.channel)[1]!.args.text).toBe(APOLOGY);
    await logged("reply posted", (l) => l.ts === second.ts && l.failed === true && l.parts === 0);
  });

  it("refuses signed bodies that are not an object and timestamps far from now in either direction, and keeps answering", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const body of [null, 42, "text", [1, 2]]) expect((await postSigned(eventsUrl, body)).status).toBe(400);
    const event = dm("UALICE", "still there?");
    expect((await postSigned(eventsUrl, eventCallback(team, event), { timestamp: now + 10 * 60 })).status).toBe(401);
    expect((await postSigned(eventsUrl, eventCallback(team, event), { timestamp: now - 10 * 60 })).status).toBe(401);
    await logged("slack request refused", (l) => l.why === "timestamp more than five minutes from now");
    expect(posts(event.channel)).toHaveLength(0);
    expect(await storedMessages()).toBe(0);
    // A small clock difference is no reason to refuse, and the process is still up to answer.
    anthropic.enqueue({ text: "Still here." });
    expect((await postSigned(eventsUrl, eventCallback(team, event), { timestamp: now + 60 })).status).toBe(200);
    const [reply] = await waitForPosts(event.channel, 1);
    expect(reply!.args.text).toBe("Still here.");
  });

  it("answers @cairn why in a thread, to the asker alone, with what the last answer there drew on", async () => {
    const channel = uniqueId("C");
    const root = slack.nextTs();
    anthropic.enqueue({ toolUse: [{ name: "skills_list", input: {} }] }, { text: "Reset it with envctl." });
    await send({ type: "app_mention", channel, user: "UALICE", text: `<@${slack.bot.userId}> how do I reset staging?`, ts: root, event_ts: root });
    await waitForPosts(channel, 1);
    // The answer streams into its post before the turn ends and records what it drew on: the 👀
    // coming off says the turn is done.
    await slack.waitFor("👀 removed", () => slack.callsTo("reactions.remove").some((c) => c.args.channel === channel && c.args.timestamp === root));
    const ts = slack.nextTs();
    await send({ type: "app_mention", channel, user: "UBOB", text: `<@${slack.bot.userId}> why?`, ts, thread_ts: root, event_ts: ts });
    const shown = await slack.waitFor("the why answer", () => slack.callsTo("chat.postEphemeral").find((c) => c.args.channel === channel));
    expect(shown.args).toMatchObject({ user: "UBOB", thread_ts: root });
    expect(String(shown.args.text)).toContain("Why my last answer here");
    expect(String(shown.args.text)).toContain("Tools called: 1.");
    // A command, not a chat turn: the model was not asked again, and nothing public was posted.
    expect(anthropic.requests).toHaveLength(2);
    expect(posts(channel)).toHaveLength(1);
  });

  it("logs and acknowledges malformed and unknown events", async () => {
    const bad = await send({ type: "message", channel: "DUALICE", channel_type: "im", user: "UALICE", text: "no ts" });
    const unknown = await send({ type: "pin_added", user: "UALICE", channel_id: "C1", event_ts: slack.nextTs() });
    const badReaction = await send({ type: "reaction_added", user: "UALICE", item: { type: "message" }, event_ts: "x" });
    expect([bad.status, unknown.status, badReaction.status]).toEqual([200, 200, 200]);
    await logged("malformed message event ignored", (l) => typeof l.detail === "string" && String(l.detail).includes("ts"));
    await logged("unhandled event type acknowledged", (l) => l.eventType === "pin_added");
    await logged("malformed reaction event ignored", () => true);
    expect(await storedMessages()).toBe(0);
  });

  it("calls only Web API methods whose scopes the manifest declares", () => {
    for (const c of slack.calls) methodsSeen.add(c.method);
    expect([...methodsSeen].sort()).toEqual(expect.arrayContaining(["auth.test", "chat.postMessage", "chat.update", "reactions.add", "users.info"]));
    for (const method of methodsSeen) expect(Object.keys(METHOD_SCOPES), method).toContain(method);
  });
});

it("refuses to start without an app token or a signing secret, and with a bad bot token", async () => {
  const slack = await startFakeSlack();
  try {
    const { log } = captureLogger();
    // Start-up fails before any event could reach the core.
    const core: AdapterHost = { attach: () => ({}) as CorePort };
    await expect(startSlack(core, { botToken: BOT_TOKEN, apiUrl: slack.apiUrl, port: 0 }, log)).rejects.toThrow(/SLACK_APP_TOKEN.*SLACK_SIGNING_SECRET/);
    await expect(startSlack(core, { botToken: "xoxb-wrong", signingSecret: "s", apiUrl: slack.apiUrl, port: 0, retries: 0 }, log)).rejects.toThrow(
      /Slack rejected SLACK_BOT_TOKEN \(auth.test: invalid_auth\)/,
    );
    await expect(startSlack(core, { botToken: BOT_TOKEN, appToken: APP_TOKEN, apiUrl: "http://127.0.0.1:1/api/", port: 0, retries: 0 }, log)).rejects.toThrow(
      /could not reach Slack at http:\/\/127.0.0.1:1\/api\/ to check SLACK_BOT_TOKEN/,
    );
  } finally {
    await slack.close();
  }
});
