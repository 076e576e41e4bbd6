/**
 * The contract's driver for Discord: the real discord.js client against the fake gateway and REST
 * API, in one guild with a supply of fresh channels; people's messages and reactions are gateway
 * dispatches. What a channel, thread or DM shows is the fake's store of its messages.
 */
import { expect } from "vitest";
import type { AdapterHost, CorePort, PostTarget } from "../../src/ground/adapter.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { dmWorkspace } from "../../src/platforms/discord/events.ts";
import { snowflake, startFakeDiscord, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { waitUntil } from "../fakes/http.ts";
import type { Driver, Features, Person, Place, Reaction, Sent, Shown } from "./contract.ts";

/** More than the cases ask for: each takes fresh ones. */
const CHANNELS = 16;

export class DiscordDriver implements Driver {
  readonly platform = "discord";
  readonly features: Features = { channels: true, threads: true, reactions: true, redelivery: true, edits: true };
  readonly thumbsUp = "👍";
  private readonly guild = snowflake();
  private readonly people: Record<Person, FakeUser> = {
    alice: { id: snowflake(), username: "alice", globalName: "Alice" },
    bob: { id: snowflake(), username: "bob", globalName: "Bob" },
    mallory: { id: snowflake(), username: "mallory", globalName: "Mallory" },
  };
  private readonly channels = Array.from({ length: CHANNELS }, (_, i) => ({ id: snowflake(), name: `contract-${i}` }));
  private used = 0;
  /** A thread's parent channel, by the thread's id. */
  private readonly parents = new Map<string, string>();
  private discord!: FakeDiscord;
  private adapter!: DiscordAdapter;

  userId(person: Person): string {
    return this.people[person].id;
  }

  async start(core: CorePort & AdapterHost) {
    this.discord = await startFakeDiscord({ guilds: [{ id: this.guild, name: "Contract", channels: this.channels, members: Object.values(this.people) }] });
    this.adapter = await startDiscord(
      core,
      { token: this.discord.token, applicationId: this.discord.applicationId, apiUrl: this.discord.apiUrl },
      silentLogger,
      { shutdownGraceMs: 5_000, progressIntervalMs: 50 },
    );
    return this.adapter;
  }

  async stop(): Promise<void> {
    await this.adapter?.stop();
    await this.discord?.close();
  }

  dmPlace(person: Person): Place {
    return { channel: this.discord.dmChannel(this.people[person]), thread: null, dm: person };
  }

  dmTarget(person: Person): PostTarget {
    return { kind: "dm", workspace: dmWorkspace(this.userId(person)), person: this.userId(person) };
  }

  async channel(): Promise<Place> {
    const channel = this.channels[this.used++];
    if (!channel) throw new Error(`the Discord driver has only ${CHANNELS} channels`);
    return { channel: channel.id, thread: null };
  }

  async thread(channel: Place): Promise<Place> {
    const id = this.discord.createThread({ guildId: this.guild, parentId: channel.channel, name: `thread ${this.parents.size}`, owner: this.people.bob });
    // Messages in it are only understood once discord.js knows the thread.
    await waitUntil(`discord.js to know thread ${id}`, () => this.adapter.client.channels.cache.has(id));
    this.parents.set(id, channel.channel);
    return { channel: id, thread: id };
  }

  async dm(person: Person, text: string): Promise<Sent> {
    return { id: this.discord.sendDm(this.people[person], text).id, replyPlace: this.dmPlace(person) };
  }

  async mention(place: Place, person: Person, text: string): Promise<Sent> {
    return this.say(place, person, `<@${this.discord.bot.id}> ${text}`);
  }

  /** Answers go where the message is: a channel's main line (as a reply to it) or its thread. */
  async say(place: Place, person: Person, text: string): Promise<Sent> {
    return { id: this.discord.sendMessage({ channelId: place.channel, author: this.people[person], content: text }).id, replyPlace: place };
  }

  /**
   * The gateway delivers at least once: after a resume the same MESSAGE_CREATE may come again.
   * discord.js drops a repeat of a message it still caches, so the repeat here is of one it no
   * longer does (its per-channel cache is bounded, and a restarted client has none): the adapter
   * hands it to the core a second time.
   */
  async deliverTwice(place: Place, person: Person, text: string): Promise<Sent> {
    const sent = await this.mention(place, person, text);
    const channel = this.adapter.client.channels.cache.get(place.channel);
    if (!channel?.isTextBased()) throw new Error(`discord.js does not know channel ${place.channel}`);
    await waitUntil(`discord.js to receive ${sent.id}`, () => channel.messages.cache.has(sent.id));
    channel.messages.cache.delete(sent.id);
    this.discord.redispatch(sent.id);
    return sent;
  }

  async react(place: Place, messageId: string, person: Person, reaction: Reaction = "up"): Promise<void> {
    this.discord.react({ channelId: place.channel, messageId, user: this.people[person], emoji: { up: this.thumbsUp, down: "👎", check: "✅" }[reaction] });
  }

  timeline(place: Place): Shown[] {
    return this.discord.messagesIn(place.channel).map((m) => ({
      id: m.id,
      fromCairn: m.author.id === this.discord.bot.id,
      text: m.content,
      inReplyTo: m.message_reference?.message_id ?? null,
    }));
  }

  postTarget(place: Place): PostTarget {
    return { kind: "channel", workspace: this.guild, channel: this.parents.get(place.channel) ?? place.channel, threadId: place.thread };
  }

  /** Model text never pings anyone: every message cairn posted says so. */
  conformance(): void {
    const sent = this.discord.posts.filter((p) => p.via === "channel");
    expect(sent.length).toBeGreaterThan(0);
    for (const post of sent) expect(post.allowedMentions).toMatchObject({ parse: [] });
  }
}
