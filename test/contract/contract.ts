import type { ChannelEvent } from "../../src/ground/channel-events.ts";
/**
 * The adapter contract as tests: what every platform adapter does for the people on it, written
 * once against a `Driver` and run for each platform (see contract.test.ts).
 *
 * A driver speaks its platform's own protocol to the real adapter (signed Events API posts to Bolt,
 * gateway dispatches to discord.js, lines on the console's input) and reads what the platform shows
 * afterwards (the fake's message store, the terminal's output). The cases never look inside an
 * adapter: they see the core's port (`Observer`, which passes every call through and notes its
 * result, so a test knows when the core is done with a message), the database, the fake model and
 * the platform. A new platform passes the suite by writing a driver; a case that needs something
 * the platform lacks (channels, threads, reactions, one post delivered twice) is skipped for it,
 * by the driver's `features`.
 */
import type { ViewRequest } from "../../src/ground/view-model.ts";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { accessPolicy, checkAccess, qualified } from "../../src/admission/access.ts";
import type { AdapterHost, CommandTarget, CorePort, PlatformAdapter, PostTarget, Received, ReplyTarget } from "../../src/ground/adapter.ts";
import { chunkText, fencesBalanced } from "../../src/ground/chunk.ts";
import type { Core } from "../../src/app/core.ts";
import { MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import type { FeedbackEvent, FeedbackResult, Inbound, Platform } from "../../src/ground/types.ts";
import type { CommandCall, CommandName } from "../../src/ground/commands.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { makeCore } from "../support/agent.ts";
import type { Database } from "../support/db.ts";

/** The people every driver knows. The core serves alice and bob; mallory is refused. */
export type Person = "alice" | "bob" | "mallory";
export const PEOPLE: readonly Person[] = ["alice", "bob", "mallory"];

/** A place messages are shown in, as the platform names it. */
export interface Place {
  /** The channel cairn's messages there are posted in (and deliveries recorded under). */
  channel: string;
  /** The thread; null for a DM or a channel's main line. */
  thread: string | null;
  /** For a DM: whose it is (a platform with one DM channel for everyone, the console, needs it). */
  dm?: Person;
}

/** A person's message, delivered to the adapter. */
export interface Sent {
  /** The platform's id of the message: the core's `Inbound.messageId`. */
  id: string;
  /** Where the platform shows cairn's answer to it. */
  replyPlace: Place;
}

/** One message as the platform shows it now: after every edit, deleted ones gone. */
export interface Shown {
  /** The platform's id; null where the platform shows none (a terminal). */
  id: string | null;
  fromCairn: boolean;
  text: string;
  /** The message it is visibly attached to: a Slack thread's root, a Discord reply's reference. */
  inReplyTo: string | null;
}

/** The reactions the contracts use; each driver spells them its platform's way. */
export type Reaction = "up" | "down" | "check";

export interface Features {
  /** Channels besides DMs, where cairn answers when it is mentioned. */
  channels: boolean;
  threads: boolean;
  reactions: boolean;
  /** The adapter edits its own messages: drafts and tool statuses are shown by post-and-edit. */
  edits: boolean;
  /** The platform may deliver one post twice (retries, event pairs, gateway replays). */
  redelivery: boolean;
}

export interface Driver {
  readonly platform: Platform;
  readonly features: Features;
  /** A thumbs-up as this platform spells it in reactions (unused without reactions). */
  readonly thumbsUp: string;
  /** The platform's user id of a person (access rules are written with them). */
  userId(person: Person): string;
  /** Starts the fake platform and the adapter on `core`; resolves once it takes events. */
  start(core: CorePort & AdapterHost, observer: Observer): Promise<PlatformAdapter>;
  stop(): Promise<void>;
  /** A direct message from `person` to cairn. */
  dm(person: Person, text: string): Promise<Sent>;
  dmPlace(person: Person): Place;
  /** Where `core.post` sends a message to the person's DMs. */
  dmTarget(person: Person): PostTarget;
  /** A channel nobody has talked in yet. */
  channel(): Promise<Place>;
  /** A new thread in `channel`, started by someone else, that cairn is not in. */
  thread(channel: Place): Promise<Place>;
  /** A post in `place` that mentions cairn. */
  mention(place: Place, person: Person, text: string): Promise<Sent>;
  /** A post in `place` that does not address cairn. */
  say(place: Place, person: Person, text: string): Promise<Sent>;
  /** A post in `place` mentioning cairn, delivered to the adapter twice. */
  deliverTwice(place: Place, person: Person, text: string): Promise<Sent>;
  /** A reaction by `person` on message `messageId` (default a thumbs-up), spelled as this platform does. */
  react(place: Place, messageId: string, person: Person, reaction?: Reaction): Promise<void>;
  /** What `place` shows now, oldest first. */
  timeline(place: Place): Shown[];
  /** Where `core.post` sends a message to `place` (a channel's main line or a thread). */
  postTarget(place: Place): PostTarget;
  /** Platform rules checked after the shared cases (e.g. every Web API method called is in the app's scopes). */
  conformance?(): void;
}

/**
 * The core's port as the adapter sees it, passed through to the real core; every call and its
 * result is noted, so a test waits until the core is done with a message instead of sleeping.
 */
export class Observer implements CorePort, AdapterHost {
  readonly received: { inbound: Inbound; result: Received | null; error: unknown }[] = [];
  readonly feedbacks: { event: FeedbackEvent; result: FeedbackResult | null }[] = [];

  constructor(private readonly core: Core) {}

  get log() {
    return this.core.log;
  }

  get journal() {
    return this.core.journal;
  }

  /** The port the core gives the adapter, with each call noted on the way through. */
  attach(adapter: PlatformAdapter): CorePort {
    const port = this.core.attach(adapter);
    return {
      receive: (inbound, target, opts) => this.noteReceive(inbound, () => port.receive(inbound, target, opts)),
      feedback: (event) => this.noteFeedback(event, () => port.feedback(event)),
      endSession: (inbound, reason) => port.endSession(inbound, reason),
      answer: (inbound, call, target) => port.answer(inbound, call, target),
      command: (inbound, name, args) => port.command(inbound, name, args),
      view: (inbound, request) => port.view(inbound, request),
      observe: (event) => port.observe(event),
      claim: (key, windowMs) => port.claim(key, windowMs),
      journal: port.journal,
      log: port.log,
    };
  }

  receive(inbound: Inbound, target: ReplyTarget): Promise<Received> {
    return this.noteReceive(inbound, () => this.core.receive(inbound, target));
  }

  feedback(event: FeedbackEvent): Promise<FeedbackResult> {
    return this.noteFeedback(event, () => this.core.feedback(event));
  }

  private async noteReceive(inbound: Inbound, run: () => Promise<Received>): Promise<Received> {
    const entry: (typeof this.received)[number] = { inbound, result: null, error: null };
    this.received.push(entry);
    try {
      entry.result = await run();
      return entry.result;
    } catch (err) {
      entry.error = err ?? new Error("receive rejected");
      throw err;
    }
  }

  private async noteFeedback(event: FeedbackEvent, run: () => Promise<FeedbackResult>): Promise<FeedbackResult> {
    const entry: (typeof this.feedbacks)[number] = { event, result: null };
    this.feedbacks.push(entry);
    entry.result = await run();
    return entry.result;
  }

  endSession(inbound: Inbound, reason: "request" | "restart"): Promise<void> {
    return this.core.endSession(inbound, reason);
  }

  answer(inbound: Inbound, call: CommandCall, target: CommandTarget) {
    return this.core.answer(inbound, call, target);
  }

  command(inbound: Inbound, name: CommandName, args?: readonly string[]) {
    return this.core.command(inbound, name, args);
  }

  view(inbound: Inbound, request: ViewRequest) {
    return this.core.view(inbound, request);
  }

  observe(event: ChannelEvent) {
    return this.core.observe(event);
  }

  claim(key: string, windowMs?: number) {
    return this.core.claim(key, windowMs);
  }

  /** The core's results for the first `n` deliveries of message `id`, once it is done with them. */
  async settled(id: string, n = 1): Promise<Received[]> {
    const done = await waitUntil(
      `the core to finish ${n} deliveries of ${id}`,
      () => {
        const mine = this.received.filter((r) => r.inbound.messageId === id);
        const failed = mine.find((r) => r.error !== null);
        if (failed) throw new Error(`core.receive rejected ${id}: ${String(failed.error)}`);
        return mine.length >= n && mine.every((r) => r.result !== null) && mine;
      },
      20_000,
    );
    return done.map((r) => r.result!);
  }

  /** The core's answer to the first reaction on platform message `id`. */
  async feedbackOn(id: string): Promise<FeedbackResult> {
    const entry = await waitUntil(`feedback on ${id}`, () => this.feedbacks.find((f) => f.event.targetMessageId === id && f.result !== null), 20_000);
    return entry.result!;
  }
}

/** cairn's messages right after the person's message `id` in `timeline`, up to the next person's message. */
export function answerIn(timeline: readonly Shown[], id: string): Shown[] {
  const at = timeline.findIndex((m) => !m.fromCairn && m.id === id);
  if (at < 0) throw new Error(`message ${id} is not shown where its answer was expected`);
  const after = timeline.slice(at + 1);
  const next = after.findIndex((m) => !m.fromCairn);
  return next < 0 ? after : after.slice(0, next);
}

/** The ids the platform shows for `parts` are the ids the adapter handed back (deliveries are recorded under them). */
function expectIds(parts: readonly Shown[], posted: readonly string[]): void {
  expect(parts).toHaveLength(posted.length);
  if (parts.every((p) => p.id !== null)) expect(parts.map((p) => p.id)).toEqual(posted);
}

const texts = (parts: readonly Shown[]) => parts.map((p) => p.text);

/** A Markdown answer of over 6,000 characters: paragraphs, a long code block, a list. */
export function longAnswer(): string {
  const para = (i: number) => `Paragraph ${i}: **note** that deploys and rollbacks ${"take care and patience, ".repeat(10).trim()}`;
  const steps = Array.from({ length: 70 }, (_, i) => `    step_${String(i).padStart(2, "0")} = run("deploy stage ${i}") or check(${i})`);
  const code = ["```python", "def deploy():", ...steps, "```"].join("\n");
  return ["# Deploy guide", ...Array.from({ length: 8 }, (_, i) => para(i)), code, ...Array.from({ length: 6 }, (_, i) => para(i + 8)), "- the last **point**"].join("\n\n");
}

/** The code lines of `longAnswer()`, each of which must reach the person intact. */
const codeLines = (answer: string) => /```python\n([\s\S]*?)\n```/.exec(answer)![1]!.split("\n").map((l) => l.trim());

/**
 * Registers the contract's cases for one driver against `getDb()`'s database: one fake model, one
 * core and one platform for all of them.
 */
export function adapterContract(driver: Driver, getDb: () => Database): void {
  const f = driver.features;
  let anthropic: FakeAnthropic;
  let core: Core;
  let observer: Observer;
  let adapter: PlatformAdapter;
  const policy = accessPolicy({ admins: [], users: [qualified(driver.platform, driver.userId("alice")), qualified(driver.platform, driver.userId("bob"))], channels: [], roles: [] });

  /** The parts a Markdown answer becomes on this platform, as the core's delivery path splits it. */
  const rendered = (markdown: string) =>
    chunkText(adapter.render(markdown), { maxChars: adapter.capabilities.maxMessageLength, maxLines: adapter.capabilities.maxMessageLines });
  /** The core's result for `sent` and cairn's answer to it as the platform shows it. */
  const answer = async (sent: Sent, deliveries = 1) => {
    const results = await observer.settled(sent.id, deliveries);
    return { results, parts: answerIn(driver.timeline(sent.replyPlace), sent.id) };
  };
  /** The one reply to `sent`, checked against what the adapter handed back. */
  const replied = async (sent: Sent) => {
    const { results, parts } = await answer(sent);
    const result = results[0]!;
    if (result.kind !== "replied") throw new Error(`expected a reply to ${sent.id}, the core said ${JSON.stringify(result)}`);
    expectIds(parts, result.posted);
    return { result, parts };
  };
  const modelSaw = (text: string) => anthropic.requests.some((r) => JSON.stringify(r.body.messages).includes(text));
  const db = () => getDb().prisma;
  const storedPersonMessage = (sent: Sent) => db().message.findFirst({ where: { platformId: sent.id, role: "user" } });
  const deliveriesOf = async (messageId: number) => (await db().delivery.findMany({ where: { messageId }, orderBy: { id: "asc" } })).map((d) => ({ channel: d.channelId, id: d.platformId }));
  const feedbackJobs = async () => (await core.jobs.list("feedback")).map((j) => JSON.parse(j.payload) as Record<string, unknown>);
  /** cairn's last `n` messages in `place`, which must end it. */
  const lastPosted = (place: Place, n: number) => {
    const timeline = driver.timeline(place);
    const tail = timeline.slice(-n);
    expect(tail.every((m) => m.fromCairn)).toBe(true);
    return tail;
  };
  /** A reaction on cairn's message `id` in `place` is queued as feedback on stored message `replyMessageId`. */
  const expectFeedback = async (place: Place, id: string, replyMessageId: number) => {
    const before = (await feedbackJobs()).length;
    // In a DM only its owner (and cairn) can react.
    await driver.react(place, id, place.dm ?? "bob");
    expect(await observer.feedbackOn(id)).toMatchObject({ kind: "recorded", replyMessageId });
    const jobs = (await feedbackJobs()).slice(before);
    // However the platform spells it (driver.thumbsUp), the core gets the character.
    expect(jobs).toEqual([expect.objectContaining({ replyMessageId, emoji: "👍", action: "added" })]);
  };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    core = makeCore(getDb(), anthropic, { access: policy, bundledSkillsDir: null });
    observer = new Observer(core);
    adapter = await driver.start(observer, observer);
  });
  afterAll(async () => {
    await driver.stop();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault({ text: "ok" });
  });

  it("answers a DM: the model's answer reaches the person, and the message and the reply are stored", async () => {
    const text = "Hello **Alice**: deploys go out on `Tuesdays`, see [the runbook](https://example.com/runbook).";
    anthropic.enqueue({ text });
    const sent = await driver.dm("alice", "when do we deploy?");
    const { result, parts } = await replied(sent);
    expect(result.status).toBe("ok");
    expect(texts(parts)).toEqual(rendered(text));
    expect(anthropic.requests).toHaveLength(1);
    expect(modelSaw("when do we deploy?")).toBe(true);

    const asked = await storedPersonMessage(sent);
    expect(asked).toMatchObject({ text: "when do we deploy?", status: "answered" });
    const reply = await db().message.findUniqueOrThrow({ where: { id: result.replyMessageId! } });
    expect(reply).toMatchObject({ role: "assistant", text, status: "sent", replyToId: asked!.id, conversationId: asked!.conversationId });
    expect(await deliveriesOf(reply.id)).toEqual(result.posted.map((id) => ({ channel: driver.dmPlace("alice").channel, id })));
  });

  it.skipIf(!f.channels)("answers a mention in a channel in its thread, and a mention inside a thread in that thread", async () => {
    const channel = await driver.channel();
    anthropic.enqueue({ text: "Deploys go out on **Tuesdays**." });
    const sent = await driver.mention(channel, "alice", "what is our deploy day?");
    const { result, parts } = await replied(sent);
    expect(result.status).toBe("ok");
    expect(texts(parts)).toEqual(rendered("Deploys go out on **Tuesdays**."));
    // The answer hangs on the message it answers (Slack: the thread it starts; Discord: a reply to it).
    expect(parts[0]!.inReplyTo).toBe(sent.id);
    expect(modelSaw("what is our deploy day?")).toBe(true);
    expect(await storedPersonMessage(sent)).toMatchObject({ text: "what is our deploy day?", status: "answered" });

    if (!f.threads) return;
    const thread = await driver.thread(channel);
    anthropic.enqueue({ text: "Thursdays in this thread." });
    const inThread = await driver.mention(thread, "bob", "and in here?");
    expect(inThread.replyPlace).toEqual(thread);
    expect(texts((await replied(inThread)).parts)).toEqual(rendered("Thursdays in this thread."));
  });

  it.skipIf(!f.threads)("follows a thread it was addressed in without a new mention, and stays out of threads it is not in", async () => {
    const channel = await driver.channel();
    const thread = await driver.thread(channel);
    anthropic.enqueue({ text: "Let's plan it." }, { text: "The changelog goes out with the release." });
    await replied(await driver.mention(thread, "alice", "let's plan the release"));
    const followUp = await driver.say(thread, "bob", "what about the changelog?");
    const { result, parts } = await replied(followUp);
    expect(result.status).toBe("ok");
    expect(texts(parts)).toEqual(rendered("The changelog goes out with the release."));
    // One conversation: the follow-up's turn saw the mention before it.
    const last = JSON.stringify(anthropic.lastRequest()!.body.messages);
    expect(last).toContain("let's plan the release");
    expect(last).toContain("what about the changelog?");

    // Where a top-level mention starts a thread (Slack), that thread is followed too.
    const top = await driver.mention(channel, "alice", "who is on call?");
    await replied(top);
    if (top.replyPlace.thread !== null) {
      anthropic.enqueue({ text: "Bob is, this week." });
      const inIt = await driver.say(top.replyPlace, "bob", "and next week?");
      expect(texts((await replied(inIt)).parts)).toEqual(rendered("Bob is, this week."));
    }

    const requests = anthropic.requests.length;
    const elsewhere = await driver.thread(channel);
    const chatter = await driver.say(elsewhere, "bob", "just chatting");
    const { results, parts: none } = await answer(chatter);
    expect(results).toEqual([{ kind: "dropped", reason: "not_addressed" }]);
    expect(none).toEqual([]);
    expect(anthropic.requests).toHaveLength(requests);
    expect(await storedPersonMessage(chatter)).toBeNull();
  });

  it.skipIf(!f.redelivery)("answers a post delivered twice once: one model request, one reply, one stored message", async () => {
    const channel = await driver.channel();
    // A slow answer: the second delivery arrives while the first is being answered.
    anthropic.setDefault({ delayMs: 150, then: { text: "Summary: all good." } });
    const sent = await driver.deliverTwice(channel, "alice", "summarize the incident");
    const { results, parts } = await answer(sent, 2);
    expect(results.map((r) => r.kind).sort()).toEqual(["dropped", "replied"]);
    expect(results.find((r) => r.kind === "dropped")).toEqual({ kind: "dropped", reason: "duplicate" });
    expect(texts(parts)).toEqual(rendered("Summary: all good."));
    expect(anthropic.requests).toHaveLength(1);
    expect(await db().message.count({ where: { platformId: sent.id, role: "user" } })).toBe(1);
  });

  it("tells a refused person once and stores nothing of theirs", async () => {
    const refusal = checkAccess(policy, { platform: driver.platform, author: { externalId: driver.userId("mallory") }, channel: { externalId: "x", isDm: true } });
    expect(refusal.ok).toBe(false);
    const refusalText = refusal.ok ? "" : refusal.text;
    const sent = await driver.dm("mallory", "what did the team decide about releases?");
    const { result, parts } = await replied(sent);
    expect(result).toMatchObject({ status: "refused", replyMessageId: null });
    expect(texts(parts)).toEqual(rendered(refusalText));

    if (f.threads) {
      // Chatting in a thread cairn follows, without addressing it: not even a refusal.
      const thread = await driver.thread(await driver.channel());
      await replied(await driver.mention(thread, "alice", "let's plan the release"));
      const chat = await driver.say(thread, "mallory", "I think Friday works");
      const { results, parts: none } = await answer(chat);
      expect(results).toEqual([{ kind: "silent", status: "refused" }]);
      expect(none).toEqual([]);
    }

    expect(modelSaw("releases?") || modelSaw("Friday works")).toBe(false);
    const mallory = driver.userId("mallory");
    expect(await db().message.count({ where: { author: { externalId: mallory } } })).toBe(0);
    expect(await db().message.count({ where: { OR: [{ platformId: sent.id }, { text: { contains: "releases?" } }, { text: { contains: "Friday works" } }, { text: refusalText }] } })).toBe(0);
  });

  it("posts the polite apology when the model is unreachable, and keeps the person's message", async () => {
    anthropic.failForever(529);
    const sent = await driver.dm("bob", "are you there?");
    const { result, parts } = await replied(sent);
    expect(result.status).toBe("failed");
    expect(texts(parts)).toEqual(rendered(MODEL_UNAVAILABLE_REPLY));
    expect(anthropic.requests.length).toBeGreaterThanOrEqual(1);
    const asked = await storedPersonMessage(sent);
    expect(asked).toMatchObject({ text: "are you there?" });
    expect(await db().message.findUniqueOrThrow({ where: { id: result.replyMessageId! } })).toMatchObject({ text: MODEL_UNAVAILABLE_REPLY, status: "failed", replyToId: asked!.id });
  });

  it("splits a long answer within the platform's limit, every code fence balanced, nothing lost", async () => {
    const text = longAnswer();
    expect(text.length).toBeGreaterThan(6000);
    // Streamed slowly enough to be drafted and edited where the platform edits.
    anthropic.enqueue({ text, pieces: 12, intervalMs: 25 });
    const sent = await driver.dm("alice", "write the deploy guide");
    const { result, parts } = await replied(sent);
    const caps = adapter.capabilities;
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(caps.maxMessageLength);
      expect(part.text.split("\n").length).toBeLessThanOrEqual(caps.maxMessageLines);
      expect(fencesBalanced(part.text)).toBe(true);
    }
    if (adapter.render(text).length > caps.maxMessageLength) expect(parts.length).toBeGreaterThanOrEqual(2);
    // Every line of code reaches the person, in order.
    const shown = texts(parts).join("\n");
    let from = 0;
    for (const line of codeLines(text)) {
      const at = shown.indexOf(line, from);
      expect(at, line).toBeGreaterThanOrEqual(from);
      from = at + line.length;
    }
    // Where drafts are shown by post-and-edit, they end as exactly the split answer.
    if (f.edits) expect(texts(parts)).toEqual(rendered(text));
    expect((await deliveriesOf(result.replyMessageId!)).map((d) => d.id)).toEqual(result.posted);
  });

  it.skipIf(!f.reactions)("takes a reaction on the last part of a split reply as feedback on the stored reply", async () => {
    anthropic.enqueue({ text: longAnswer() });
    const sent = await driver.dm("alice", "the deploy guide again, please");
    const { result, parts } = await replied(sent);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    await expectFeedback(sent.replyPlace, parts.at(-1)!.id!, result.replyMessageId!);
  });

  it.skipIf(!f.channels)("posts what the core starts itself in a channel and in a thread, recorded as deliveries, the thread then followed", async () => {
    const channel = await driver.channel();
    const report = "**Weekly report**: 3 deploys, 0 incidents. See `runbook`.";
    const posted = await core.post(driver.platform, driver.postTarget(channel), report);
    expect(posted.failed).toBe(false);
    const shown = lastPosted(channel, posted.posted.length);
    expect(texts(shown)).toEqual(rendered(report));
    expectIds(shown, posted.posted);
    expect(await deliveriesOf(posted.messageId)).toEqual(posted.posted.map((id) => ({ channel: channel.channel, id })));
    expect(await db().message.findUniqueOrThrow({ where: { id: posted.messageId } })).toMatchObject({ role: "assistant", text: report });
    if (f.reactions) await expectFeedback(channel, posted.posted[0]!, posted.messageId);

    if (!f.threads) return;
    const thread = await driver.thread(channel);
    const question = "Is the _release_ still on for Friday?";
    const inThread = await core.post(driver.platform, driver.postTarget(thread), question);
    const inThreadShown = lastPosted(thread, inThread.posted.length);
    expect(texts(inThreadShown)).toEqual(rendered(question));
    expectIds(inThreadShown, inThread.posted);
    expect((await deliveriesOf(inThread.messageId)).map((d) => d.channel)).toEqual(inThread.posted.map(() => thread.channel));
    // cairn asked there: the answer to its question needs no mention.
    anthropic.enqueue({ text: "Thanks, noted." });
    const answerToIt = await driver.say(thread, "bob", "yes, Friday");
    expect(texts((await replied(answerToIt)).parts)).toEqual(rendered("Thanks, noted."));
  });

  it("posts what the core starts itself to a person's DMs, opening them, recorded as a delivery", async () => {
    const note = "A reminder: the **retro** is tomorrow.";
    const posted = await core.post(driver.platform, driver.dmTarget("alice"), note);
    expect(posted.failed).toBe(false);
    const place = driver.dmPlace("alice");
    const shown = lastPosted(place, posted.posted.length);
    expect(texts(shown)).toEqual(rendered(note));
    expectIds(shown, posted.posted);
    expect(await deliveriesOf(posted.messageId)).toEqual(posted.posted.map((id) => ({ channel: place.channel, id })));
    const stored = await db().message.findUniqueOrThrow({ where: { id: posted.messageId }, include: { conversation: true } });
    expect(stored).toMatchObject({ role: "assistant", text: note, conversation: { isDm: true, channelId: place.channel } });
    if (f.reactions) await expectFeedback(place, posted.posted[0]!, posted.messageId);
  });

  it.skipIf(!driver.conformance)("keeps the platform's own rules", () => {
    driver.conformance!();
  });
}
