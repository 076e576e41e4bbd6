/**
 * Slack's native feedback buttons end to end: the real Bolt app (HTTP and Socket Mode) against the
 * fake Slack, the real Core on the test databases, and the fake model server. An answer carries the
 * buttons under its text, and a click on them becomes a feedback job like a reaction does.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import {
  blockActions,
  captureLogger,
  eventCallback,
  postInteraction,
  postSigned,
  startFakeSlack,
  waitUntil,
  type BlockActionsOptions,
  type FakeSlack,
  type StoredMessage,
} from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { chunkText } from "../../src/ground/chunk.ts";
import type { SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import { FEEDBACK_ACTION_ID } from "../../src/platforms/slack/feedback/buttons.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { startBothModes } from "../support/slack-modes.ts";

/** What the buttons block must be, exactly as Slack documents feedback_buttons. */
const BUTTONS = {
  type: "context_actions",
  elements: [
    {
      type: "feedback_buttons",
      action_id: "cairn_feedback",
      positive_button: { text: { type: "plain_text", text: "Good answer" }, value: "positive" },
      negative_button: { text: { type: "plain_text", text: "Not right" }, value: "negative" },
    },
  ],
};
const withButtons = (text: string) => [{ type: "section", text: { type: "mrkdwn", text } }, BUTTONS];

forEachDatabase("slack feedback buttons end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let httpMode: SlackHandle;
  let socketMode: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;

  const dm = (user: string, text: string) => {
    const ts = slack.nextTs();
    // DM channel ids are unique per test: the fake's message store outlives a test.
    return { type: "message", channel: `D${user}${team.slice(2)}`, channel_type: "im", user, text, ts, event_ts: ts };
  };
  const logged = (msg: string, pred: (l: Record<string, unknown>) => boolean) => waitUntil(`log "${msg}"`, () => logs.find(msg, pred).length > 0, 15_000);
  /** Sends a person's message over HTTP, waits until its answer is posted and its delivery recorded; the bot's messages since. */
  const ask = async (event: { channel: string; ts: string } & Record<string, unknown>): Promise<StoredMessage[]> => {
    expect((await postSigned(eventsUrl, eventCallback(team, event))).status).toBe(200);
    await logged("reply posted", (l) => l.ts === event.ts);
    return slack.messages(event.channel).filter((m) => m.user === slack.bot.userId && Number(m.ts) > Number(event.ts));
  };
  const click = (o: Partial<BlockActionsOptions> & Pick<BlockActionsOptions, "channel" | "messageTs" | "value">) =>
    blockActions({ teamId: team, user: "UALICE", messageUser: slack.bot.userId, actionId: FEEDBACK_ACTION_ID, actionTs: slack.nextTs(), ...o });
  const workspaceId = async () => (await getDb().prisma.workspace.findFirst({ where: { platform: "slack", externalId: team } }))?.id ?? "none";
  /** The feedback jobs the core queued for this test's workspace, with their payloads. */
  const feedbackJobs = async () => {
    const ws = await workspaceId();
    const jobs = await getDb().prisma.job.findMany({ where: { kind: "feedback" }, orderBy: { createdAt: "asc" } });
    return jobs.map((j) => JSON.parse(j.payload) as Record<string, unknown>).filter((p) => p.workspaceId === ws);
  };
  const replyId = async () => (await getDb().prisma.message.findFirstOrThrow({ where: { role: "assistant", workspaceId: await workspaceId() }, orderBy: { id: "desc" } })).id;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic);
    ({ httpMode, socketMode, eventsUrl } = await startBothModes(core, slack, logs.log));
  });
  afterAll(async () => {
    await httpMode?.stop();
    await socketMode?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    slack.reset();
    team = uniqueId("T");
    slack.addUser({ id: "UALICE", displayName: "Alice" });
    slack.addUser({ id: "UBOB", displayName: "Bob" });
  });

  it("puts the feedback buttons under an answer with its text unchanged, and none on the status line", async () => {
    anthropic.enqueue({ toolUse: [{ name: "skills_list", input: {} }] }, { delayMs: 150, then: { text: "Hello **Alice**, see [the guide](https://example.com/?a=1&b=2)." } });
    const event = dm("UALICE", "what skills do we have?");
    const [reply, ...others] = await ask(event);
    expect(others).toEqual([]);
    const text = "Hello *Alice*, see <https://example.com/?a=1&amp;b=2|the guide>.";
    expect(reply!.text).toBe(text);
    expect(reply!.blocks).toEqual(withButtons(text));
    // The status line went up without buttons; the edit that made it the answer brought them.
    const status = slack.callsTo("chat.postMessage").find((c) => c.args.channel === event.channel)!;
    expect(String(status.args.text)).toMatch(/^⏳ _.+…_$/);
    expect(status.args.blocks).toBeUndefined();
    const final = slack.callsTo("chat.update").filter((c) => c.args.channel === event.channel).at(-1)!;
    expect(final.args).toMatchObject({ ts: reply!.ts, text });
    expect(JSON.parse(String(final.args.blocks))).toEqual(withButtons(text));
  });

  it("puts the buttons on the last part of a long answer only, in two sections past 3,000 characters, and none on an apology", async () => {
    const paragraph = (i: number) => `Paragraph ${i}: **note** that deploys & rollbacks ${"take care and patience ".repeat(12)}`;
    const answer = (n: number) => Array.from({ length: n }, (_, i) => paragraph(i)).join("\n\n");
    const sectionTexts = (m: StoredMessage) => (m.blocks ?? []).slice(0, -1).map((b) => (b as { type: string; text: { text: string } }).text.text);

    anthropic.enqueue({ text: answer(24) });
    const first = dm("UALICE", "write the deploy guide");
    const parts = await ask(first);
    const expected = chunkText(toMrkdwn(answer(24)), { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY });
    expect(expected.length).toBeGreaterThanOrEqual(2);
    expect(parts.map((m) => m.text)).toEqual(expected);
    expect(parts.slice(0, -1).every((m) => m.blocks === undefined)).toBe(true);
    expect(parts.at(-1)!.blocks).toEqual(withButtons(parts.at(-1)!.text));

    // One message over a section's 3,000 characters: its text in two sections, cut between paragraphs.
    anthropic.enqueue({ text: answer(10) });
    const second = dm("UALICE", "a shorter one");
    const [single, ...none] = await ask(second);
    expect(none).toEqual([]);
    expect(single!.text).toBe(toMrkdwn(answer(10)));
    expect(single!.text.length).toBeGreaterThan(3000);
    const sections = sectionTexts(single!);
    expect(sections).toHaveLength(2);
    expect(sections.every((t) => t.length <= 3000)).toBe(true);
    expect(sections.join("\n\n")).toBe(single!.text);
    expect(single!.blocks!.at(-1)).toEqual(BUTTONS);

    anthropic.failForever(529);
    const third = dm("UALICE", "are you there?");
    const [apology] = await ask(third);
    anthropic.clearFailure();
    expect(apology!.text).toBe(MODEL_UNAVAILABLE_REPLY);
    expect(apology!.blocks).toBeUndefined();
  });

  it("turns a click on 'Not right' into a negative feedback job for that reply (HTTP mode)", async () => {
    anthropic.enqueue({ text: "Deploys go out on Tuesdays." });
    const event = dm("UALICE", "when do we deploy?");
    const [reply] = await ask(event);
    const res = await postInteraction(eventsUrl, click({ channel: event.channel, messageTs: reply!.ts, value: "negative" }));
    expect(res.status).toBe(200);
    await logged("feedback click recorded", (l) => l.target === reply!.ts);
    const jobs = await feedbackJobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ replyMessageId: await replyId(), emoji: "👎", signal: "negative", action: "added" });
    const clicker = await getDb().prisma.person.findFirstOrThrow({ where: { externalId: "UALICE", workspace: { externalId: team } } });
    expect(jobs[0]!.reactorId).toBe(clicker.id);
  });

  it("turns a click on 'Good answer' into a positive feedback job in Socket Mode, the envelope acknowledged", async () => {
    anthropic.enqueue({ text: "Use the blue button." });
    const event = dm("UBOB", "how do I deploy?");
    const [reply] = await ask(event);
    const id = slack.pushEnvelope("interactive", click({ user: "UBOB", channel: event.channel, messageTs: reply!.ts, value: "positive" }));
    const ack = await slack.waitForAck(id);
    await logged("feedback click recorded", (l) => l.target === reply!.ts);
    expect(ack.payload).toEqual({});
    const jobs = await feedbackJobs();
    expect(jobs.map((j) => [j.replyMessageId, j.emoji, j.signal])).toEqual([[await replyId(), "👍", "positive"]]);
  });

  it("does nothing for a click on a message that is not a cairn reply", async () => {
    anthropic.enqueue({ text: "Noted." });
    const event = dm("UALICE", "remember nothing");
    await ask(event);
    // A person's message, and a bot message the core never delivered as a reply.
    const theirs = slack.seedMessage({ channel: event.channel, user: "UBOB", text: "not cairn's" });
    const unknown = slack.nextTs();
    expect((await postInteraction(eventsUrl, click({ channel: event.channel, messageTs: theirs, messageUser: "UBOB", value: "negative" }))).status).toBe(200);
    expect((await postInteraction(eventsUrl, click({ channel: event.channel, messageTs: unknown, value: "negative" }))).status).toBe(200);
    await logged("feedback click ignored", (l) => l.target === theirs && l.reason === "not_on_bot_message");
    await logged("feedback click ignored", (l) => l.target === unknown && l.reason === "not_a_reply");
    expect(await feedbackJobs()).toEqual([]);
  });

  it("logs and acknowledges malformed clicks, and answers the next message", async () => {
    const event = dm("UALICE", "still there?");
    const good = click({ channel: event.channel, messageTs: slack.nextTs(), value: "negative" });
    const { channel: _channel, message: _message, container: _container, ...placeless } = good;
    const statuses = [];
    // Not JSON, and JSON that is not an object (which Bolt would read fields of and crash): refused.
    for (const payload of ["{not json", "null", "42", "[1]"]) statuses.push((await postInteraction(eventsUrl, payload)).status);
    expect(statuses).toEqual([400, 400, 400, 400]);
    await logged("slack request refused", (l) => l.why === "interaction payload is not a JSON object");
    // Routed to the feedback listener but unusable: acknowledged (200), logged, nothing recorded.
    const malformed = [
      placeless,
      { ...good, actions: [{ type: "feedback_buttons", action_id: FEEDBACK_ACTION_ID, value: "sideways", action_ts: slack.nextTs() }] },
      { ...good, actions: [{ type: "feedback_buttons", action_id: FEEDBACK_ACTION_ID, value: "negative", action_ts: "yesterday" }] },
    ];
    for (const payload of malformed) expect((await postInteraction(eventsUrl, payload)).status).toBe(200);
    await waitUntil("3 malformed clicks logged", () => logs.find("malformed feedback click ignored").length >= 3, 15_000);
    const socketId = slack.pushEnvelope("interactive", placeless);
    await slack.waitForAck(socketId);

    anthropic.enqueue({ text: "Still here." });
    const [reply] = await ask(event);
    expect(reply!.text).toBe("Still here.");
    expect(await feedbackJobs()).toEqual([]);
  });
});
