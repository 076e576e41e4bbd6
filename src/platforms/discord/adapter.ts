/**
 * The Discord adapter: a discord.js client wired to the core.
 *
 * - Intents: Guilds (channels, threads, roles, permission overwrites), GuildMessages and
 *   DirectMessages (messages; in guilds also their edits and deletions, for channel knowledge),
 *   MessageContent (privileged: the text of guild messages and edits; switch it on in the developer
 *   portal), GuildMessageReactions and DirectMessageReactions (feedback). Not GuildMembers: who may
 *   read a listened channel is asked over REST at each search (knowledge/can-read.ts).
 * - Partials: Channel (DM channels are never cached up front; without it DM messages are dropped),
 *   Message and Reaction (reactions on messages from before the start), User (reactors seen only by id).
 * - Gateway drops are discord.js's job: it resumes the session (Discord replays what was missed)
 *   or identifies again; the core's dedupe answers a replayed message once.
 * - Replicas: every process holding DISCORD_TOKEN has a gateway session of its own, and Discord
 *   sends every event to each. Messages are answered once through the core's dedupe; interactions,
 *   notices and reactions are claimed in the database first, and one replica acts (event-claims.ts).
 * - `stop()` stops taking new work, waits (bounded) for turns in flight to post their answers, then
 *   closes the gateway.
 * - It implements the core's adapter contract: Markdown is Discord's own format, drafts stream by
 *   post-and-edit, and the core's delivery path does the rest.
 * - Channel knowledge: guild messages, edits and deletions go to `core.observe` beside turns
 *   (knowledge/live.ts); a channel's history for the backfill (knowledge/history.ts); who may read
 *   a channel from roles and overwrites (knowledge/can-read.ts); DMs are never listened to (knowledge/channel-kind.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  Client,
  DiscordjsErrorCodes,
  Events,
  GatewayCloseCodes,
  GatewayIntentBits,
  Partials,
  RESTEvents,
  Status,
  type Message,
  type MessageReaction,
  type PartialMessage,
  type PartialMessageReaction,
  type PartialUser,
  type User,
} from "discord.js";
import type { AdapterHost, Capabilities, CorePort, PlatformAdapter, PostTarget, ReplyTarget } from "../../ground/adapter.ts";
import type { FeedbackEvent } from "../../ground/types.ts";
import { errText, type Logger } from "../../ground/log.ts";
import { handleInteraction } from "./commands/slash.ts";
import { MessageHandler } from "./messages.ts";
import { KeptMessages } from "./kept-messages.ts";
import { feedbackFromReaction, rawDmReaction, type ReactionAction } from "./reactions.ts";
import { DISCORD_MAX_LINES, DISCORD_MESSAGE_LIMIT } from "./limits.ts";
import { allowedMentions, channelTarget, partNonces } from "./target.ts";
import { guardPackets } from "./packet-guard.ts";
import { TYPING_INTERVAL_MS } from "./typing.ts";
import { readableChannels } from "./knowledge/can-read.ts";
import { ChannelHistory } from "./knowledge/history.ts";
import { channelKind } from "./knowledge/channel-kind.ts";
import { LiveKnowledge } from "./knowledge/live.ts";
import { clientNames } from "./knowledge/names.ts";
import { placeOf } from "./knowledge/place.ts";
import { claimer, interactionKey, REACTION_WINDOW_MS, reactionKey } from "./event-claims.ts";

export interface DiscordSettings {
  token: string;
  applicationId: string;
  /** REST base (discord.js `rest.api`, e.g. http://127.0.0.1:8080/api); the gateway URL then comes from its GET /gateway/bot. */
  apiUrl?: string;
  /** Replies may ping @everyone, @here and roles (CAIRN_ALLOW_MASS_MENTIONS); default: they never do. */
  allowMassMentions?: boolean;
}

/** Timings tests shorten; production uses the defaults. */
export interface DiscordTuning {
  typingIntervalMs?: number;
  /** A slash command answer slower than this is deferred (Discord allows 3 s for the first answer). */
  interactionDeferMs?: number;
  /** How long stop() waits for turns in flight. */
  shutdownGraceMs?: number;
  /** How long start-up waits for the gateway to become ready. */
  readyTimeoutMs?: number;
  /** Least time between two edits of a working message (Discord allows about 5 edits per 5 s per channel). */
  progressIntervalMs?: number;
}


export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.GuildMessageReactions,
  GatewayIntentBits.DirectMessageReactions,
] as const;

export const DISCORD_PARTIALS = [Partials.Channel, Partials.Message, Partials.Reaction, Partials.User] as const;

export interface DiscordAdapter extends PlatformAdapter {
  client: Client;
  /** Resolves once every event handler started so far has finished (tests; orderly hand-offs). */
  idle(): Promise<void>;
}

/** Starts Discord and attaches it to the core (replies and the core's own posts). */
export async function startDiscord(host: AdapterHost, cfg: DiscordSettings, baseLog: Logger, tuning: DiscordTuning = {}): Promise<DiscordAdapter> {
  const adapter = discordAdapter(cfg, baseLog, tuning);
  await adapter.start(host.attach(adapter));
  return adapter;
}

/** The Discord adapter for these settings; `start` wires the gateway's events to the core and logs in. */
export function discordAdapter(cfg: DiscordSettings, baseLog: Logger, tuning: DiscordTuning = {}): DiscordAdapter {
  const log = baseLog.child({ platform: "discord" });
  const mentions = allowedMentions(cfg.allowMassMentions === true);
  const client = new Client({
    intents: [...DISCORD_INTENTS],
    partials: [...DISCORD_PARTIALS],
    ...(cfg.apiUrl ? { rest: { api: cfg.apiUrl } } : {}),
    // Defaults for every message the client sends: model text never pings anyone by accident (mass
    // mentions only where an admin allowed them), and a reply to a message deleted meanwhile is
    // still posted.
    allowedMentions: mentions,
    failIfNotExists: false,
  });
  guardPackets(client, log);
  const botId = (): string => {
    if (!client.user) throw new Error("the Discord client is not ready");
    return client.user.id;
  };
  const capabilities: Capabilities = {
    ephemeral: true,
    maxMessageLength: DISCORD_MESSAGE_LIMIT,
    maxMessageLines: DISCORD_MAX_LINES,
    minEditIntervalMs: tuning.progressIntervalMs ?? 1_200,
  };
  const open = async (target: PostTarget): Promise<ReplyTarget> => {
    // A Discord thread is a channel of its own.
    const channel =
      target.kind === "dm" ? await (await client.users.fetch(target.person)).createDM() : await client.channels.fetch(target.threadId ?? target.channel);
    if (!channel?.isSendable()) throw new Error(`cannot post to Discord channel ${target.kind === "dm" ? `DM of ${target.person}` : target.channel}`);
    // A reply finished by crash recovery: its parts under the same keys as the live turn's (target.ts).
    return channelTarget(channel, mentions, target.kind === "channel" && target.answers ? partNonces(target.answers) : undefined);
  };
  const names = clientNames(client);
  const history = new ChannelHistory(client, names, log);
  const adapter: DiscordAdapter = {
    platform: "discord",
    capabilities,
    // Markdown is Discord's own format.
    render: (markdown) => markdown,
    start: (core) => connect(core),
    // Ready, and every gateway shard up (a shard resuming or identifying again is not).
    connected: () => !stopping && client.isReady() && client.ws.shards.every((shard) => shard.status === Status.Ready),
    open,
    channelHistory: (guild, channel, page) => history.page(guild, channel, page),
    canRead: (guild, person, channels) => readableChannels(client, guild, person, channels),
    channelKind: (_guild, channel) => channelKind(client, channel),
    client,
    async idle() {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      const grace = new AbortController();
      await Promise.race([Promise.allSettled([...inflight]), sleep(tuning.shutdownGraceMs ?? 10_000, undefined, { signal: grace.signal }).catch(() => {})]);
      grace.abort();
      await client.destroy();
      log.info("discord disconnected");
    },
  };
  let stopping = false;
  const inflight = new Set<Promise<void>>();
  return adapter;

  /** Wires the gateway's events to the core, then logs in and waits for the guilds. */
  async function connect(core: CorePort): Promise<void> {
    const claim = claimer(core, log);
    const messages = new MessageHandler({ core, log, botId, typingIntervalMs: tuning.typingIntervalMs ?? TYPING_INTERVAL_MS, mentions, claim });
    const knowledge = new LiveKnowledge({ core, log, place: (id) => placeOf(client, id), names });

    const track = (what: string, work: () => Promise<void>): Promise<void> => {
      if (stopping) return Promise.resolve();
      const p = work().catch((err: unknown) => log.error({ err, what }, "discord event handler failed"));
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      return p;
    };

    const feedback = async (event: FeedbackEvent | null): Promise<void> => {
      if (!event || !(await claim(reactionKey(event), REACTION_WINDOW_MS))) return;
      const result = await core.feedback(event);
      log.debug({ message: event.targetMessageId, emoji: event.emoji, action: event.action, result: result.kind }, "reaction delivered");
    };
    const onReaction = (action: ReactionAction) => (reaction: MessageReaction | PartialMessageReaction, user: User | PartialUser) =>
      track("reaction", async () => feedback(await feedbackFromReaction(reaction, user, action, botId())));

    // Kept in the journal first (kept-messages.ts): the journal hands it to the handler, now or once storage answers.
    // Stopping: a kept message is neither handled nor settled; it stays in the journal for the next start.
    const kept = new KeptMessages(core, client, (message, settle, held) => (stopping ? new Promise<void>(() => {}) : track("message", () => messages.handle(message, settle, held))), log);
    client.on(Events.MessageCreate, (message: Message) => track("message", () => kept.receive(message)));
    client.on(Events.MessageReactionAdd, onReaction("added"));
    client.on(Events.MessageReactionRemove, onReaction("removed"));
    client.on("raw", (packet: unknown) => {
      // Every guild message, edit and deletion, for channel knowledge; turns are decided apart (MessageCreate).
      const observe = knowledge.fromDispatch(packet);
      if (observe) track("channel event", observe);
      // Before discord.js handles the packet: a DM reaction it is about to drop (see reactions.ts).
      if (!client.user) return;
      const event = rawDmReaction(packet, client.user.id, (id) => client.channels.cache.get(id)?.isTextBased() === true);
      if (event) track("dm reaction", () => feedback(event));
    });
    client.on(Events.InteractionCreate, (interaction) =>
      track("interaction", async () => {
        // Before any answer: Discord takes one per interaction, and refuses the rest (40060).
        if (!(await claim(interactionKey(interaction.id)))) return;
        await handleInteraction(interaction, { core, log, deferAfterMs: tuning.interactionDeferMs ?? 2_000 });
      }),
    );
    client.on(Events.MessageUpdate, (_old, updated: Message | PartialMessage) => {
      // Edits are not turns: cairn answered the original text; a note in the log helps support.
      log.trace({ message: updated.id }, "message edit ignored");
    });
    client.on(Events.Error, (err) => log.error({ err }, "discord client error"));
    client.on(Events.Warn, (message) => log.warn({ message }, "discord client warning"));
    client.on(Events.ShardError, (err) => log.warn({ err: errText(err) }, "discord gateway connection error"));
    client.on(Events.ShardReconnecting, () => {
      // discord.js reports its own shutdown as a disconnect too.
      if (!stopping) log.warn("discord gateway disconnected; reconnecting");
    });
    client.on(Events.ShardDisconnect, (event) => log.error({ code: event.code }, closeExplanation(event.code)));
    client.on(Events.ShardResume, (_id, replayed) => log.info({ replayed }, "discord gateway resumed"));
    client.on(Events.Debug, (message) => log.trace({ message }, "discord.js"));
    client.rest.on(RESTEvents.RateLimited, (info) => log.warn({ route: info.route, retryAfterMs: info.retryAfter, global: info.global }, "discord rate limit; waiting"));

    const readyTimeoutMs = tuning.readyTimeoutMs ?? 60_000;
    const abort = new AbortController();
    const ready = new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      client.on(Events.ShardDisconnect, (event) => reject(new Error(closeExplanation(event.code))));
      sleep(readyTimeoutMs, undefined, { signal: abort.signal }).then(
        () => reject(new Error(`Discord did not become ready within ${readyTimeoutMs / 1000}s (gateway from ${cfg.apiUrl ?? "discord.com"})`)),
        () => {},
      );
    });
    try {
      // login() resolves when the gateway session is up; `ready` when the guilds have arrived. A
      // refused IDENTIFY (bad intents) never resolves login(), so the race also watches `ready`.
      await Promise.race([Promise.all([client.login(cfg.token), ready]), ready]);
      await ready;
    } catch (err) {
      await client.destroy().catch(() => {});
      throw startError(err);
    } finally {
      abort.abort();
    }
    const user = client.user;
    if (user && client.application && client.application.id !== cfg.applicationId) {
      log.warn(
        { configured: cfg.applicationId, actual: client.application.id },
        "DISCORD_APPLICATION_ID is not the application of DISCORD_TOKEN: slash commands registered for it will not reach this bot",
      );
    }
    log.info({ user: user?.tag, guilds: client.guilds.cache.size }, "discord connected");
  }
}
function closeExplanation(code: number): string {
  switch (code) {
    case GatewayCloseCodes.DisallowedIntents:
      return "Discord refused the gateway intents (close 4014): switch on MESSAGE CONTENT INTENT for this bot in the developer portal (Bot → Privileged Gateway Intents).";
    case GatewayCloseCodes.AuthenticationFailed:
      return "Discord rejected DISCORD_TOKEN on the gateway (close 4004): reset the bot token in the developer portal and set it again.";
    case GatewayCloseCodes.InvalidIntents:
      return "Discord says the requested intents are invalid (close 4013).";
    default:
      return `Discord closed the gateway and will not reconnect (close ${code}).`;
  }
}

function startError(err: unknown): Error {
  if (err instanceof Error && "code" in err && err.code === DiscordjsErrorCodes.TokenInvalid) {
    return new Error("Discord rejected DISCORD_TOKEN (401): copy the bot token from the developer portal (Bot → Reset Token).", { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
