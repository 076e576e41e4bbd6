/**
 * "Why this answer?" on Slack end to end: the message shortcut (a signed `message_action`
 * interaction) against the real Bolt app in HTTP mode, the fake Slack and the fake model, the real
 * Core on both databases. The answer is the clicker's alone (chat.postEphemeral, in the thread), and
 * explains THAT reply (not the thread's last): its rules, lessons, facts, skills and the messages
 * its search returned, with their links, and nothing the clicker may not see.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { captureLogger, eventCallback, messageShortcut, postInteraction, postSigned, SIGNING_SECRET, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { WHY_CALLBACK_ID } from "../../src/platforms/slack/commands/why-shortcut.ts";
import { NOT_AN_ANSWER } from "../../src/commands/why.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";
import { dmHits, drawingTurn, expectWhy, seedWhy, storedTrace } from "../support/why.ts";

forEachDatabase("slack why this answer", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let adapter: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0 } });
    adapter = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), logs.log);
    eventsUrl = `http://127.0.0.1:${adapter.port}/slack/events`;
  });
  afterAll(async () => {
    await adapter?.stop();
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

  const mention = (text: string) => `<@${slack.bot.userId}> ${text}`;
  /** Sends a person's message and waits until its answer is posted and recorded; the answer's ts. */
  const ask = async (event: Record<string, unknown> & { channel: string; ts: string }): Promise<string> => {
    expect((await postSigned(eventsUrl, eventCallback(team, event))).status).toBe(200);
    await waitUntil(`the answer to ${event.ts}`, () => logs.find("reply posted", (l) => l.ts === event.ts).length > 0, 15_000);
    const mine = slack.messages(event.channel).filter((m) => m.user === slack.bot.userId && Number(m.ts) > Number(event.ts));
    return mine[0]!.ts;
  };
  const inThread = (user: string, channel: string, root: string, text: string) => {
    const ts = slack.nextTs();
    return { type: "app_mention", channel, user, text: mention(text), ts, event_ts: ts, ...(root ? { thread_ts: root } : {}) };
  };
  /** `user` picks the shortcut on the message `ts`; the ephemeral answer Slack was asked to show them. */
  const why = async (user: string, channel: string, message: { ts: string; user: string; thread_ts?: string }): Promise<string> => {
    const before = slack.callsTo("chat.postEphemeral").length;
    const sent = await postInteraction(eventsUrl, messageShortcut({ teamId: team, user, channel, callbackId: WHY_CALLBACK_ID, message }));
    expect(sent.status).toBe(200);
    const shown = await slack.waitFor("the why answer", () => slack.callsTo("chat.postEphemeral").slice(before)[0]);
    expect(shown.args).toMatchObject({ channel, user, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) });
    return String(shown.args.text);
  };
  const replyIdOf = async (ts: string) => (await getDb().prisma.delivery.findFirstOrThrow({ where: { platformId: ts } })).messageId;

  it("explains the reply it is picked on to the clicker alone: Alice sees all of it, Bob what he may see", async () => {
    const channel = uniqueId("C");
    const tag = uniqueId("w").toLowerCase();
    const root = slack.nextTs();
    const at = (user: string) => core.history.resolve({ platform: "slack", workspace: { externalId: team }, author: { externalId: user }, channel: { externalId: channel, isDm: false }, threadId: root, messageId: "", text: "", sentAt: new Date() });
    const seed = await seedWhy(core, getDb(), await at("UALICE"), await at("UBOB"), tag);
    // Earlier: Alice says in her DM what only she may see, and Bob says something in another thread.
    anthropic.setDefault({ text: "Noted." });
    const dmChannel = `DUALICE${team.slice(2)}`;
    const dmTs = slack.nextTs();
    await ask({ type: "message", channel: dmChannel, channel_type: "im", user: "UALICE", text: `at home I use pnpm ${tag}`, ts: dmTs, event_ts: dmTs });
    await ask(inThread("UBOB", channel, "", `the pnpm lockfile is committed ${tag}`));
    // The thread: Bob first (his profile is in the session's snapshot too), then Alice's two questions.
    await ask({ type: "app_mention", channel, user: "UBOB", text: mention("hello"), ts: root, event_ts: root });
    anthropic.enqueue(drawingTurn(seed, `pnpm ${tag}`), { text: "Install them with pnpm." });
    const first = await ask(inThread("UALICE", channel, root, "how do we install packages, npm or pnpm?"));
    anthropic.enqueue({ text: "Tuesdays." });
    const second = await ask(inThread("UALICE", channel, root, "and when do we ship?"));

    const trace = await storedTrace(getDb(), await replyIdOf(first));
    const dms = await dmHits(getDb(), trace);
    expect(dms.size).toBeGreaterThan(0);
    const asBob = await why("UBOB", channel, { ts: first, user: slack.bot.userId, thread_ts: root });
    expect(asBob).toContain(`Why this answer* (reply ${await replyIdOf(first)})`);
    expectWhy(asBob, "bob", seed, trace, dms);
    // The other thread's message is cited by its permalink.
    expect(asBob).toMatch(new RegExp(`<https://slack\\.com/archives/${channel}/p\\d+\\|Bob, \\d{4}-\\d\\d-\\d\\d>`));
    const asAlice = await why("UALICE", channel, { ts: first, user: slack.bot.userId, thread_ts: root });
    expectWhy(asAlice, "alice", seed, trace, dms);

    expect(asAlice).toMatch(new RegExp(`<https://slack\\.com/archives/${dmChannel}/p\\d+\\|Alice, `));

    // The thread's last answer drew on no tool: picked on it, no search or skill is listed.
    const last = await why("UALICE", channel, { ts: second, user: slack.bot.userId, thread_ts: root });
    expect(last).toContain(`(reply ${await replyIdOf(second)})`);
    expect(last).toContain("It called no tools.");
    expect(last).not.toContain("Searches it ran");
    expect(last).not.toContain("Skills it read");
    expect(last).toContain(seed.aliceFact.text);
  });

  it("says so for a message that is not one of cairn's answers, and ignores a malformed shortcut", async () => {
    const channel = uniqueId("C");
    anthropic.setDefault({ text: "Hi." });
    const root = slack.nextTs();
    await ask({ type: "app_mention", channel, user: "UBOB", text: mention("hello"), ts: root, event_ts: root });
    expect(await why("UALICE", channel, { ts: root, user: "UBOB" })).toBe(NOT_AN_ANSWER);
    const malformed = messageShortcut({ teamId: team, user: "UALICE", channel, callbackId: WHY_CALLBACK_ID, message: { ts: "not a ts" } });
    expect((await postInteraction(eventsUrl, malformed)).status).toBe(200);
    await waitUntil("the malformed shortcut logged", () => logs.find("malformed why shortcut ignored").length > 0, 15_000);
  });
});
