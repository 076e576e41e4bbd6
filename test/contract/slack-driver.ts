/**
 * The contract's driver for Slack: the real Bolt app in HTTP mode, fed signed Events API posts,
 * against the fake Slack Web API. Every person's post is also put in the fake's message store, so
 * what a channel, thread or DM shows is the store: people's posts and cairn's, after its edits and
 * deletions.
 */
import { expect } from "vitest";
import type { AdapterHost, CorePort, PostTarget } from "../../src/ground/adapter.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { METHOD_SCOPES } from "../../src/platforms/slack/scopes.ts";
import { BOT_TOKEN, SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, type FakeSlack, type StoredMessage } from "../fakes/slack.ts";
import { uniqueId } from "../support/db.ts";
import type { Driver, Features, Person, Place, Reaction, Sent, Shown } from "./contract.ts";

const USERS: Record<Person, string> = { alice: "UALICE", bob: "UBOB", mallory: "UMALLORY" };

export class SlackDriver implements Driver {
  readonly platform = "slack";
  readonly features: Features = { channels: true, threads: true, reactions: true, redelivery: true, edits: true };
  readonly thumbsUp = "+1";
  private readonly team = uniqueId("T");
  private slack!: FakeSlack;
  private handle!: SlackHandle;
  private eventsUrl = "";

  userId(person: Person): string {
    return USERS[person];
  }

  async start(core: CorePort & AdapterHost) {
    this.slack = await startFakeSlack();
    for (const [name, id] of Object.entries(USERS)) this.slack.addUser({ id, displayName: name[0]!.toUpperCase() + name.slice(1) });
    this.handle = await startSlack(
      core,
      { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: this.slack.apiUrl, port: 0, host: "127.0.0.1", retries: 1, retryMinMs: 10, progressIntervalMs: 50, drainMs: 5_000 },
      silentLogger,
    );
    this.eventsUrl = `http://127.0.0.1:${this.handle.port}/slack/events`;
    return this.handle;
  }

  async stop(): Promise<void> {
    await this.handle?.stop();
    await this.slack?.close();
  }

  dmPlace(person: Person): Place {
    return { channel: this.slack.dmChannel(USERS[person]), thread: null, dm: person };
  }

  dmTarget(person: Person): PostTarget {
    return { kind: "dm", workspace: this.team, person: USERS[person] };
  }

  async channel(): Promise<Place> {
    return { channel: uniqueId("C"), thread: null };
  }

  async thread(channel: Place): Promise<Place> {
    // A thread is a top-level post with replies: someone else's, never shown to cairn.
    const root = this.slack.seedMessage({ channel: channel.channel, user: USERS.bob, text: "a thread of our own" });
    return { channel: channel.channel, thread: root };
  }

  async dm(person: Person, text: string): Promise<Sent> {
    const place = this.dmPlace(person);
    const ts = this.store(place, person, text);
    await this.send({ type: "message", channel: place.channel, channel_type: "im", user: USERS[person], text, ts, event_ts: ts });
    return { id: ts, replyPlace: place };
  }

  async mention(place: Place, person: Person, text: string): Promise<Sent> {
    const body = this.mentionText(text);
    const ts = this.store(place, person, body);
    await this.send({ type: "app_mention", ...this.post(place, person, body, ts) });
    return this.sent(place, ts);
  }

  async say(place: Place, person: Person, text: string): Promise<Sent> {
    const ts = this.store(place, person, text);
    await this.send({ type: "message", channel_type: "channel", ...this.post(place, person, text, ts) });
    return this.sent(place, ts);
  }

  /** Slack sends a mention in a channel twice: as `message` and as `app_mention`, in either order. */
  async deliverTwice(place: Place, person: Person, text: string): Promise<Sent> {
    const body = this.mentionText(text);
    const ts = this.store(place, person, body);
    const post = this.post(place, person, body, ts);
    await Promise.all([this.send({ type: "message", channel_type: "channel", ...post }), this.send({ type: "app_mention", ...post })]);
    return this.sent(place, ts);
  }

  async react(place: Place, messageId: string, person: Person, reaction: Reaction = "up"): Promise<void> {
    const message = this.slack.messages(place.channel).find((m) => m.ts === messageId);
    await this.send({
      type: "reaction_added",
      user: USERS[person],
      reaction: { up: this.thumbsUp, down: "-1", check: "white_check_mark" }[reaction],
      item_user: message?.user ?? this.slack.bot.userId,
      item: { type: "message", channel: place.channel, ts: messageId },
      event_ts: this.slack.nextTs(),
    });
  }

  timeline(place: Place): Shown[] {
    const inPlace = (m: StoredMessage) => (place.thread === null ? m.thread_ts === undefined || m.thread_ts === m.ts : m.ts === place.thread || m.thread_ts === place.thread);
    return this.slack
      .messages(place.channel)
      .filter(inPlace)
      .map((m) => ({ id: m.ts, fromCairn: m.user === this.slack.bot.userId, text: m.text, inReplyTo: m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : null }));
  }

  postTarget(place: Place): PostTarget {
    return { kind: "channel", workspace: this.team, channel: place.channel, threadId: place.thread };
  }

  /** Every Web API method the adapter called is one the app's manifest grants a scope for. */
  conformance(): void {
    const methods = new Set(this.slack.calls.map((c) => c.method));
    expect([...methods]).toEqual(expect.arrayContaining(["chat.postMessage", "chat.update", "conversations.open", "reactions.add", "users.info"]));
    for (const method of methods) expect(Object.keys(METHOD_SCOPES), `${method} is not covered by the manifest's scopes`).toContain(method);
  }

  private mentionText(text: string): string {
    return `<@${this.slack.bot.userId}> ${text}`;
  }

  /** Puts a person's post in the fake's store (a thread's history, what the place shows); returns its ts. */
  private store(place: Place, person: Person, text: string): string {
    return this.slack.seedMessage({ channel: place.channel, user: USERS[person], text, ...(place.thread ? { thread_ts: place.thread } : {}) });
  }

  private post(place: Place, person: Person, text: string, ts: string): Record<string, unknown> {
    return { channel: place.channel, user: USERS[person], text, ts, event_ts: ts, ...(place.thread ? { thread_ts: place.thread } : {}) };
  }

  /** Channel posts are answered in their thread: the one they are in, or the one they start. */
  private sent(place: Place, ts: string): Sent {
    return { id: ts, replyPlace: { channel: place.channel, thread: place.thread ?? ts } };
  }

  private async send(event: Record<string, unknown>): Promise<void> {
    const res = await postSigned(this.eventsUrl, eventCallback(this.team, event));
    if (res.status !== 200) throw new Error(`Slack events endpoint answered ${res.status}: ${res.body}`);
  }
}
