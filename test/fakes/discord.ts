/**
 * A fake Discord: the gateway (WebSocket, JSON encoding, no compression) and the REST API (v10) on
 * one 127.0.0.1 port, for the real discord.js client to talk to.
 *
 * Why real protocols and not a mocked client: what breaks in production lives on the wire — the
 * HELLO/IDENTIFY/READY handshake, sequence numbers and RESUME replay after a drop, DM payloads
 * that need `channel_type`, partial structures for uncached messages, 429 handling with
 * `retry-after`, the 2,000-character limit (a too-long message gets the real 50035 error here).
 *
 * What it models: gateway sessions (IDENTIFY starts one, RESUME continues it and replays the
 * dispatches the client missed, then RESUMED; a client's clean close, 1000 or 1001, ends it), several
 * at once, as replicas sharing a bot token hold them: every dispatch goes to every session, numbered
 * in that session's own sequence, as Discord does for an unsharded bot; guilds with text channels,
 * threads, members and the bot's managed role; DM channels (created on first DM); messages,
 * reactions and slash-command interactions dispatched by tests; the bot's own messages echoed back
 * over the gateway as Discord does. Every REST call is recorded; the next N calls of a route can
 * be answered with 429 or any error. Message components (rows of buttons) and modals are checked
 * against Discord's limits and recorded; tests click a recorded button (MESSAGE_COMPONENT) and
 * submit a recorded modal (MODAL_SUBMIT), and interaction answers may update the clicked message
 * (types 6 and 7) or open a modal (type 9). An interaction takes one answer: a second callback for
 * it gets Discord's 400 (code 40060, "Interaction has already been acknowledged."), recorded in
 * `refusedCallbacks`.
 *
 * Channel knowledge (what a listening cairn reads): a channel's history in pages (GET messages with
 * `before` and `limit`, newest first; tests seed hundreds of messages with their own times), active
 * and archived public threads, edits and deletions dispatched (MESSAGE_UPDATE, MESSAGE_DELETE,
 * MESSAGE_DELETE_BULK), and what decides who may read a channel: the guild's roles (GUILD_CREATE),
 * members' roles (GET a guild member; 404 Unknown Member once they left), channels' permission
 * overwrites (GUILD_CREATE, CHANNEL_UPDATE), a channel deleted (CHANNEL_DELETE). GUILD_MEMBER_UPDATE
 * and GUILD_MEMBER_REMOVE are dispatched only to a client that asked for the privileged
 * GuildMembers intent, as Discord does. The fake stores permissions and hands them out; it does not
 * enforce them on its own REST routes. What it does not model: sharding, compression, presence, voice.
 */
import http from "node:http";
import { randomBytes } from "node:crypto";
import { WebSocketServer, WebSocket } from "ws";
import { z } from "zod";
import { flattenHeaders, listenLocal, readBody, waitUntil } from "./http.ts";

// ---------------------------------------------------------------------------------------------
// Ids and wire shapes
// ---------------------------------------------------------------------------------------------

const DISCORD_EPOCH = 1420070400000n;
/** How long Discord returns the message made with a nonce under enforce_nonce ("the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000;
let snowflakeIncrement = 0n;

/** A valid Discord snowflake (timestamp-based, unique within this process). */
export function snowflake(at: number = Date.now()): string {
  snowflakeIncrement = (snowflakeIncrement + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (BigInt(process.pid & 0x1f) << 12n) | snowflakeIncrement).toString();
}

export interface FakeUser {
  id: string;
  username: string;
  globalName?: string | null;
  bot?: boolean;
}

/** A permission overwrite on a channel: a role's (the guild's id is @everyone's) or a member's. */
export interface FakeOverwrite {
  id: string;
  type: "role" | "member";
  allow?: bigint;
  deny?: bigint;
}

export interface FakeRole {
  id: string;
  name: string;
  /** The role's guild-wide permissions (none by default). */
  permissions?: bigint;
}

export interface FakeGuild {
  id: string;
  name: string;
  channels: { id: string; name: string; overwrites?: FakeOverwrite[] }[];
  /** `private`: a private thread (type 12); `archived`: listed among the parent's archived threads, not the active ones. */
  threads?: { id: string; name: string; parentId: string; private?: boolean; archived?: boolean }[];
  /** People in the guild (the bot is added automatically). The first is the guild's owner. */
  members: FakeUser[];
  /** Roles besides @everyone and the bot's managed role. */
  roles?: FakeRole[];
  /** @everyone's permissions (default: Discord's default set, which includes View Channel and Read Message History). */
  everyonePermissions?: bigint;
  /** Members' roles by user id (none by default). */
  memberRoles?: Record<string, string[]>;
}

/** Discord's permission bits the fake's tests use. */
export const PERMISSIONS = { viewChannel: 1n << 10n, sendMessages: 1n << 11n, readMessageHistory: 1n << 16n } as const;
/** What @everyone may do in a new guild: Discord's default set. */
export const DEFAULT_EVERYONE_PERMISSIONS = 2248473465835073n;

export interface ApiUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: null;
  bot?: boolean;
}

interface ApiMember {
  user?: ApiUser;
  roles: string[];
  joined_at: string;
  deaf: boolean;
  mute: boolean;
  flags: number;
  nick: null;
  avatar: null;
  premium_since: null;
  pending: boolean;
  communication_disabled_until: null;
  permissions?: string;
}

export interface ApiAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type?: string;
}

export interface ApiMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: ApiUser;
  member?: ApiMember;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: (ApiUser & { member?: ApiMember })[];
  mention_roles: string[];
  attachments: ApiAttachment[];
  embeds: unknown[];
  pinned: boolean;
  type: number;
  flags: number;
  components: ComponentRow[];
  message_reference?: { type: number; message_id: string; channel_id: string; guild_id?: string };
  referenced_message?: ApiMessage | null;
  channel_type?: number;
  webhook_id?: string;
  application_id?: string;
}

interface ChannelRecord {
  id: string;
  /** 0 text, 1 DM, 3 group DM, 11 public thread, 12 private thread. */
  type: 0 | 1 | 3 | 11 | 12;
  name?: string;
  guildId?: string;
  parentId?: string;
  recipient?: FakeUser;
  overwrites?: FakeOverwrite[];
  /** A thread listed among its parent's archived threads. */
  archived?: boolean;
}

/** A message the bot posted (through REST), as the tests see it. */
export interface PostedMessage {
  id: string;
  channelId: string;
  content: string;
  /** The message it replies to (message_reference), if any. */
  replyTo: string | null;
  flags: number;
  allowedMentions: unknown;
  /** update: an interaction's UPDATE_MESSAGE (type 7) of the message its button is on. */
  via: "channel" | "interaction" | "followup" | "edit" | "update" | "delete";
  interactionId?: string;
  /** The embeds the message carries after this post (empty: text only). */
  embeds: Embed[];
  /** Its rows of buttons after this post. */
  components: ComponentRow[];
}

/** A modal cairn opened (interaction response type 9), as the person would see it. */
export interface FakeModal {
  /** The interaction it answered. */
  interactionId: string;
  channelId: string;
  /** The message whose button opened it, if any: its submission may update that message. */
  messageId: string | null;
  customId: string;
  title: string;
  inputs: { customId: string; label: string; style: number; value?: string; maxLength?: number; required: boolean }[];
}

export interface RestCall {
  seq: number;
  method: string;
  /** The path after `/api/v10`. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  status: number;
}

export interface GatewayConnection {
  path: string;
  query: Record<string, string>;
}

interface Dispatch {
  s: number;
  t: string;
  d: unknown;
}

/** A gateway session: its own sequence numbers and the dispatches it was sent, kept for RESUME. */
interface Session {
  id: string;
  seq: number;
  log: Dispatch[];
  intents: number;
  /** The socket it is on now; null while the client is away (it may resume). */
  socket: WebSocket | null;
}

/** A gateway session as tests see it. */
export interface FakeGatewaySession {
  id: string;
  /** A socket carries it now. */
  connected: boolean;
  /** The types of the dispatches it was sent, in order (READY, GUILD_CREATE, ...). */
  dispatched: string[];
}

/** An interaction answer refused because the interaction was answered already (400, code 40060). */
export interface RefusedCallback {
  interactionId: string;
  /** The refused answer's type (4 message, 5 deferral, 7 update, 9 modal, ...), null if unreadable. */
  type: number | null;
}

export interface RouteMatch {
  method: string;
  /** Matched against the path after `/api/v10`, e.g. /^\/channels\/\d+\/messages$/. */
  path: RegExp;
}

const GatewayFrame = z.looseObject({ op: z.number().int(), d: z.unknown() });
const IdentifyData = z.looseObject({
  token: z.string(),
  intents: z.number().int(),
  properties: z.looseObject({ os: z.string(), browser: z.string(), device: z.string() }),
  shard: z.tuple([z.number(), z.number()]).optional(),
  compress: z.boolean().optional(),
});
const ResumeData = z.looseObject({ token: z.string(), session_id: z.string(), seq: z.number().int().nullable() });

/** An embed as Discord checks it: each part within its limit (the message's 6,000 in total is checked apart). */
const EmbedSchema = z.looseObject({
  title: z.string().max(256).optional(),
  description: z.string().max(4096).optional(),
  fields: z.array(z.looseObject({ name: z.string().min(1).max(256), value: z.string().min(1).max(1024), inline: z.boolean().optional() })).max(25).optional(),
  footer: z.looseObject({ text: z.string().min(1).max(2048) }).optional(),
});
export type Embed = z.infer<typeof EmbedSchema>;

/** The characters Discord counts against a message's 6,000 across its embeds. */
function embedChars(embeds: readonly Embed[]): number {
  return embeds.reduce((n, e) => n + (e.title ?? "").length + (e.description ?? "").length + (e.footer?.text ?? "").length + (e.fields ?? []).reduce((m, f) => m + f.name.length + f.value.length, 0), 0);
}

/** A button as Discord checks it: a label within 80, a custom id within 100 (link buttons have a url instead). */
const ButtonSchema = z
  .looseObject({
    type: z.literal(2),
    style: z.number().int().min(1).max(6),
    label: z.string().min(1).max(80).optional(),
    custom_id: z.string().min(1).max(100).optional(),
    url: z.string().optional(),
    disabled: z.boolean().optional(),
  })
  .refine((b) => b.style >= 5 || b.custom_id !== undefined, { message: "A custom id is required", path: ["custom_id"] });
/** At most 5 rows of at most 5 buttons. */
const ComponentsSchema = z.array(z.looseObject({ type: z.literal(1), components: z.array(ButtonSchema).min(1).max(5) })).max(5);
export type ComponentRow = z.infer<typeof ComponentsSchema>[number];
export type Button = z.infer<typeof ButtonSchema>;

const TextInputSchema = z
  .looseObject({
    type: z.literal(4),
    custom_id: z.string().min(1).max(100),
    style: z.union([z.literal(1), z.literal(2)]),
    label: z.string().min(1).max(45).optional(),
    value: z.string().max(4000).optional(),
    min_length: z.number().int().min(0).max(4000).optional(),
    max_length: z.number().int().min(1).max(4000).optional(),
    required: z.boolean().optional(),
  })
  .refine((t) => t.value === undefined || t.max_length === undefined || t.value.length <= t.max_length, { message: "The value is longer than max_length", path: ["value"] });
/** A modal: a title within 45, 1 to 5 labelled text inputs (a label component, or the older action row). */
const ModalSchema = z.looseObject({
  custom_id: z.string().min(1).max(100),
  title: z.string().min(1).max(45),
  components: z
    .array(
      z.union([
        z.looseObject({ type: z.literal(18), label: z.string().min(1).max(45), description: z.string().max(100).optional(), component: TextInputSchema }),
        z.looseObject({ type: z.literal(1), components: z.array(TextInputSchema.refine((t) => t.label !== undefined, { message: "A label is required", path: ["label"] })).length(1) }),
      ]),
    )
    .min(1)
    .max(5),
});

/** Discord's nested `errors` of a 400 Invalid Form Body, from zod's issues. */
function formErrors(error: z.ZodError, prefix: readonly string[] = []): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const issue of error.issues) {
    let node = root;
    for (const key of [...prefix, ...issue.path.map(String)]) node = (node[key] ??= {}) as Record<string, unknown>;
    const list = (node["_errors"] ??= []) as { code: string; message: string }[];
    const max = "maximum" in issue ? Number(issue.maximum) : 0;
    const bounded = issue.code === "too_big" || issue.code === "too_small";
    list.push(
      bounded && "origin" in issue && issue.origin === "string"
        ? { code: "BASE_TYPE_MAX_LENGTH", message: `Must be ${max} or fewer in length.` }
        : bounded
          ? { code: "BASE_TYPE_BAD_LENGTH", message: `Must be between 1 and ${max} in length.` }
          : { code: "BASE_TYPE_INVALID", message: issue.message },
    );
  }
  return root;
}

/** Custom ids repeated within one message (Discord refuses them); the errors, or null. */
function duplicateIds(rows: readonly ComponentRow[], prefix: readonly string[]): Record<string, unknown> | null {
  const seen = new Set<string>();
  for (const [r, row] of rows.entries()) {
    for (const [b, button] of row.components.entries()) {
      const id = button.custom_id;
      if (id === undefined) continue;
      if (seen.has(id)) {
        let node: Record<string, unknown> = {};
        const root = node;
        for (const key of [...prefix, "components", String(r), "components", String(b), "custom_id"]) node = node[key] = {} as Record<string, unknown>;
        node["_errors"] = [{ code: "COMPONENT_CUSTOM_ID_DUPLICATED", message: "Component custom id cannot be duplicated" }];
        return root;
      }
      seen.add(id);
    }
  }
  return null;
}

const CreateMessageBody = z.looseObject({
  content: z.string().optional(),
  nonce: z.union([z.string().max(25), z.number().int()]).optional(),
  enforce_nonce: z.boolean().optional(),
  flags: z.number().int().optional(),
  embeds: z.array(EmbedSchema).max(10).optional(),
  components: ComponentsSchema.optional(),
  allowed_mentions: z.unknown().optional(),
  message_reference: z
    .looseObject({
      message_id: z.string(),
      channel_id: z.string().optional(),
      guild_id: z.string().optional(),
      fail_if_not_exists: z.boolean().optional(),
    })
    .optional(),
});
const InteractionCallbackBody = z.looseObject({ type: z.number().int(), data: z.unknown().optional() });
/** What a message answer (4, 7) or a deferral (5, 6) carries. */
const CallbackMessageData = z.looseObject({
  content: z.string().max(2000).optional(),
  flags: z.number().int().optional(),
  embeds: z.array(EmbedSchema).max(10).optional(),
  components: ComponentsSchema.optional(),
});
const CommandsBody = z.array(z.looseObject({ name: z.string().min(1).max(32), description: z.string().max(100).optional(), type: z.number().optional() }));

/** Privileged intents a bot must switch on in the developer portal: GuildMembers, GuildPresences, MessageContent. */
const PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | (1 << 15);

// ---------------------------------------------------------------------------------------------
// The fake
// ---------------------------------------------------------------------------------------------

export interface FakeDiscordOptions {
  guilds?: FakeGuild[];
  /** HELLO's heartbeat interval. Discord sends ~41 s; tests may shorten it to exercise heartbeats. */
  heartbeatIntervalMs?: number;
  /** False = the portal's privileged intents are off: IDENTIFY asking for them is closed with 4014. */
  privilegedIntents?: boolean;
  /** Echo the bot's own posts back as MESSAGE_CREATE, as Discord does (default true). */
  echoOwnMessages?: boolean;
}

export interface SendMessageOptions {
  channelId: string;
  author: FakeUser;
  content: string;
  /** Makes it a reply (type 19) to this message; `referenced_message` carries it when the fake knows it. */
  replyTo?: string;
  /** Discord's client pings the replied-to author by default; the fake does not unless asked. */
  pingRepliedUser?: boolean;
  /** The message type; default 0 (or 19 for a reply). System messages have others (7 = member join). */
  type?: number;
  attachments?: { filename: string; size?: number; contentType?: string }[];
  /** When it was sent (its id's time too); default now. */
  at?: Date;
  /** Posted through a webhook (webhook_id set, as an integration's posts are). */
  webhookId?: string;
  /** Posted while no cairn process was connected: in the channel (its history shows it), no event sent. */
  offline?: boolean;
}

export interface CommandInteractionOptions {
  user: FakeUser;
  channelId: string;
  command?: string;
  subcommand?: string;
  /** Options of the subcommand: strings (type 3) and booleans (type 5). */
  options?: Record<string, string | boolean>;
}

export interface FakeDiscord {
  /** Pass as discord.js `rest.api` (the client appends /v10). */
  readonly apiUrl: string;
  readonly gatewayUrl: string;
  readonly token: string;
  readonly applicationId: string;
  readonly bot: FakeUser;
  readonly restCalls: RestCall[];
  readonly posts: PostedMessage[];
  /** Message creates answered with an earlier message of the same nonce (enforce_nonce), none made. */
  readonly nonceReturns: { nonce: string; messageId: string }[];
  readonly connections: GatewayConnection[];
  /** `intents`: those of the last IDENTIFY. */
  readonly gateway: { identifies: number; resumes: number; heartbeats: number; intents: number | null; invalidSessions: number };
  /** The sessions not ended, oldest first: each IDENTIFY starts one; a clean close (1000, 1001) by its client ends it. */
  sessions(): FakeGatewaySession[];
  /** Interaction answers Discord refused with 40060 (the interaction was answered already), oldest first. */
  readonly refusedCallbacks: RefusedCallback[];
  /** Stored messages by id (dispatched, seeded and posted). */
  message(id: string): ApiMessage | undefined;
  /** The messages a channel (or thread, or DM channel) holds now, oldest first: edits applied, deletions gone. */
  messagesIn(channelId: string): ApiMessage[];
  /** The id of the bot's managed role in a guild (what `@cairn` may resolve to in Discord's autocomplete). */
  botRole(guildId: string): string;
  /** The DM channel id for this person (created on first use). */
  dmChannel(user: FakeUser): string;
  /** Dispatches MESSAGE_CREATE from a person (guild channel, thread or DM channel). */
  sendMessage(opts: SendMessageOptions): ApiMessage;
  /** Dispatches MESSAGE_CREATE in the person's DM with the bot (channel_type 1). */
  sendDm(author: FakeUser, content: string, extra?: Omit<SendMessageOptions, "channelId" | "author" | "content">): ApiMessage;
  /** Dispatches a stored message's MESSAGE_CREATE again, under a new sequence number (an at-least-once delivery). */
  redispatch(messageId: string): void;
  /** Sends a dispatch exactly as given, to every session: payloads Discord should never send, for hostile-input tests. */
  dispatchRaw(t: string, d: unknown): void;
  /** Stores a message without dispatching it: history from before the client started (a minute ago unless `at` says). */
  seedMessage(opts: SendMessageOptions): ApiMessage;
  /**
   * Stores many messages of one channel without dispatching them (history from before listening),
   * each at its own time (ids follow the times, as Discord's snowflakes do).
   */
  seedMessages(channelId: string, messages: readonly Omit<SendMessageOptions, "channelId">[]): ApiMessage[];
  /** A person edits their message: the stored text changes and MESSAGE_UPDATE is dispatched (the full message, as v10 sends it). */
  editMessage(messageId: string, content: string): ApiMessage;
  /** A message is deleted: MESSAGE_DELETE, or MESSAGE_DELETE_BULK for several of one channel (a moderator's purge). */
  deleteMessages(channelId: string, ids: readonly string[]): void;
  /** A member's roles change (GET member answers with the new ones; GUILD_MEMBER_UPDATE to a GuildMembers client). */
  setMemberRoles(guildId: string, user: FakeUser, roles: string[]): void;
  /** A member leaves the guild (GET member answers 404 Unknown Member; GUILD_MEMBER_REMOVE to a GuildMembers client). */
  removeMember(guildId: string, user: FakeUser): void;
  /** A channel's permission overwrites are replaced: CHANNEL_UPDATE. */
  setOverwrites(channelId: string, overwrites: FakeOverwrite[]): void;
  /** A channel is deleted: CHANNEL_DELETE; its REST routes answer 404 Unknown Channel. */
  deleteChannel(channelId: string): void;
  /** Dispatches THREAD_CREATE (a thread started now; `id` = a message id for a thread started from a message). */
  createThread(opts: { guildId: string; parentId: string; name: string; id?: string; owner: FakeUser }): string;
  react(opts: { channelId: string; messageId: string; user: FakeUser; emoji: string | { id: string; name: string }; remove?: boolean }): void;
  /** Dispatches INTERACTION_CREATE for a chat-input command (default `/cairn <subcommand>`); returns its id. */
  sendCommand(opts: CommandInteractionOptions): string;
  /**
   * Dispatches INTERACTION_CREATE for a message context-menu command (Apps → `name` on the stored
   * message `messageId`, in its channel): type 2 with data type 3, `target_id` and the message
   * under `resolved.messages`, as Discord sends one; returns its id.
   */
  sendMessageCommand(opts: { user: FakeUser; messageId: string; name: string }): string;
  /** Dispatches any INTERACTION_CREATE payload (for unknown interaction types); returns its id. */
  sendInteraction(payload: Record<string, unknown>): string;
  /**
   * Dispatches MESSAGE_COMPONENT (type 3): `user` clicks the button `customId` on the stored message
   * `messageId` (in its channel unless `channelId` says otherwise); returns the interaction id.
   * Throws when the message has no such button: a person can only click what is shown.
   */
  click(opts: { messageId: string; customId: string; user: FakeUser; channelId?: string }): string;
  /** The modals opened so far, oldest first. */
  readonly modals: FakeModal[];
  /**
   * Dispatches MODAL_SUBMIT (type 5): `user` submits `modal` with `values` by input custom id
   * (inputs not given keep their initial value); returns the interaction id. Throws for a value a
   * person could not type (over the input's max length, a required input left empty).
   */
  submitModal(modal: FakeModal, user: FakeUser, values: Record<string, string>): string;
  /** Stop sending dispatches to any session (they still get sequence numbers): as if they were lost when the link died. */
  hold(on: boolean): void;
  /** Forgets every session (or the one given): the next RESUME gets INVALID_SESSION (op 9, not resumable) and the client must IDENTIFY again. */
  expireSession(sessionId?: string): void;
  /** Closes the gateway sockets (every open one, or the given session's): "terminate" (no close frame, 1006 on the client) or a close code. */
  dropConnection(how?: "terminate" | number, sessionId?: string): Promise<void>;
  /** The next `count` calls matching the route get 429 with Retry-After = retryAfter seconds. */
  rateLimitNext(route: RouteMatch, count: number, retryAfter?: number): void;
  failNext(route: RouteMatch, count: number, status: number, body: Record<string, unknown>): void;
  calls(method: string, path: RegExp): RestCall[];
  close(): Promise<void>;
}

function apiUser(u: FakeUser): ApiUser {
  return { id: u.id, username: u.username, discriminator: "0", global_name: u.globalName ?? null, avatar: null, ...(u.bot ? { bot: true } : {}) };
}

function member(u: FakeUser | null, roles: string[] = []): ApiMember {
  return {
    ...(u ? { user: apiUser(u) } : {}),
    roles,
    joined_at: new Date(0).toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
    nick: null,
    avatar: null,
    premium_since: null,
    pending: false,
    communication_disabled_until: null,
  };
}

export async function startFakeDiscord(opts: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const token = `fake.${randomBytes(12).toString("hex")}`;
  const applicationId = snowflake();
  const bot: FakeUser = { id: applicationId, username: "cairn", bot: true };
  const heartbeatInterval = opts.heartbeatIntervalMs ?? 41_250;
  const echo = opts.echoOwnMessages ?? true;
  const guilds = opts.guilds ?? [];
  const botRoles = new Map(guilds.map((g) => [g.id, snowflake()]));

  const users = new Map<string, FakeUser>([[bot.id, bot]]);
  const channels = new Map<string, ChannelRecord>();
  const messages = new Map<string, ApiMessage>();
  const dmByUser = new Map<string, string>();
  const interactions = new Map<
    string,
    {
      token: string;
      acked: boolean;
      /** The message PATCH @original edits: the answer, or the clicked message once updated or deferred so (types 6, 7). */
      originalId: string | null;
      channelId: string;
      /** 2 command, 3 component, 5 modal submit. */
      type: number;
      /** The message a clicked button (or the modal it opened) is on. */
      sourceMessageId: string | null;
      /** A deferred answer's flags (type 5): the placeholder's, which the edit fills in. */
      deferredFlags: number;
    }
  >();
  const modals: FakeModal[] = [];
  const refusedCallbacks: RefusedCallback[] = [];
  const restCalls: RestCall[] = [];
  const posts: PostedMessage[] = [];
  const connections: GatewayConnection[] = [];
  const failures: { route: RouteMatch; remaining: number; status: number; body: Record<string, unknown>; headers: Record<string, string> }[] = [];
  const gateway = { identifies: 0, resumes: 0, heartbeats: 0, intents: null as number | null, invalidSessions: 0 };
  let restSeq = 0;

  /** Who is in each guild now, with their role ids. */
  const guildMembers = new Map<string, Map<string, string[]>>();
  for (const g of guilds) {
    for (const m of g.members) users.set(m.id, m);
    guildMembers.set(g.id, new Map([[bot.id, [botRoles.get(g.id)!]], ...g.members.map((m): [string, string[]] => [m.id, [...(g.memberRoles?.[m.id] ?? [])]])]));
    for (const c of g.channels) channels.set(c.id, { id: c.id, type: 0, name: c.name, guildId: g.id, overwrites: [...(c.overwrites ?? [])] });
    for (const t of g.threads ?? []) channels.set(t.id, { id: t.id, type: t.private ? 12 : 11, name: t.name, guildId: g.id, parentId: t.parentId, archived: t.archived ?? false });
  }
  const rolesOf = (guildId: string | undefined, userId: string): string[] => (guildId ? (guildMembers.get(guildId)?.get(userId) ?? []) : []);
  const overwriteObject = (o: FakeOverwrite) => ({ id: o.id, type: o.type === "role" ? 0 : 1, allow: String(o.allow ?? 0n), deny: String(o.deny ?? 0n) });
  /** GuildMembers (1 << 1): the privileged intent member events need. */
  const wantsMemberEvents = (s: Session): boolean => (s.intents & (1 << 1)) !== 0;

  // -------------------------------------------------------------------------------------------
  // Wire objects
  // -------------------------------------------------------------------------------------------

  const channelObject = (c: ChannelRecord): Record<string, unknown> => {
    if (c.type === 1) return { id: c.id, type: 1, last_message_id: null, flags: 0, recipients: c.recipient ? [apiUser(c.recipient)] : [] };
    const base = { id: c.id, type: c.type, guild_id: c.guildId, name: c.name, last_message_id: null, rate_limit_per_user: 0, flags: 0 };
    if (c.type === 11 || c.type === 12) {
      return {
        ...base,
        parent_id: c.parentId,
        owner_id: bot.id,
        message_count: 0,
        member_count: 1,
        total_message_sent: 0,
        thread_metadata: { archived: c.archived ?? false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
      };
    }
    return { ...base, position: 0, permission_overwrites: (c.overwrites ?? []).map(overwriteObject), parent_id: null, topic: null, nsfw: false };
  };

  const guildCreate = (g: FakeGuild): Record<string, unknown> => {
    const botRole = botRoles.get(g.id)!;
    return {
      id: g.id,
      name: g.name,
      icon: null,
      owner_id: g.members[0]?.id ?? bot.id,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      vanity_url_code: null,
      description: null,
      banner: null,
      splash: null,
      discovery_splash: null,
      premium_tier: 0,
      premium_subscription_count: 0,
      preferred_locale: "en-US",
      nsfw_level: 0,
      max_video_channel_users: 25,
      premium_progress_bar_enabled: false,
      joined_at: new Date(0).toISOString(),
      large: false,
      unavailable: false,
      member_count: g.members.length + 1,
      roles: [
        { id: g.id, name: "@everyone", color: 0, hoist: false, icon: null, unicode_emoji: null, position: 0, permissions: String(g.everyonePermissions ?? DEFAULT_EVERYONE_PERMISSIONS), managed: false, mentionable: false, flags: 0 },
        { id: botRole, name: bot.username, color: 0, hoist: false, icon: null, unicode_emoji: null, position: 1, permissions: "277025459200", managed: true, mentionable: false, flags: 0, tags: { bot_id: bot.id } },
        ...(g.roles ?? []).map((r, i) => ({ id: r.id, name: r.name, color: 0, hoist: false, icon: null, unicode_emoji: null, position: i + 2, permissions: String(r.permissions ?? 0n), managed: false, mentionable: true, flags: 0 })),
      ],
      emojis: [],
      stickers: [],
      members: [...(guildMembers.get(g.id) ?? new Map<string, string[]>()).entries()].flatMap(([id, roles]) => {
        const u = users.get(id);
        return u ? [member(u, roles)] : [];
      }),
      channels: g.channels.map((c) => {
        const { guild_id: _omit, ...rest } = channelObject(channels.get(c.id)!);
        return rest;
      }),
      // GUILD_CREATE lists active threads only.
      threads: (g.threads ?? []).filter((t) => !t.archived).map((t) => channelObject(channels.get(t.id)!)),
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  };

  const store = (m: ApiMessage): ApiMessage => {
    messages.set(m.id, m);
    return m;
  };

  const buildMessage = (o: SendMessageOptions, id = snowflake(o.at?.getTime())): ApiMessage => {
    const channel = channels.get(o.channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${o.channelId}`);
    users.set(o.author.id, o.author);
    const guildId = channel.guildId;
    const mentioned = [...o.content.matchAll(/<@!?(\d+)>/g)].flatMap((m) => {
      const u = users.get(m[1] ?? "");
      return u ? [{ ...apiUser(u), ...(guildId ? { member: member(null) } : {}) }] : [];
    });
    const referenced = o.replyTo ? (messages.get(o.replyTo) ?? null) : undefined;
    if (referenced && o.pingRepliedUser && !mentioned.some((u) => u.id === referenced.author.id)) {
      mentioned.push({ ...referenced.author, ...(guildId ? { member: member(null) } : {}) });
    }
    const msg: ApiMessage = {
      id,
      channel_id: channel.id,
      ...(guildId ? { guild_id: guildId, member: member(null, rolesOf(guildId, o.author.id)) } : {}),
      author: apiUser(o.author),
      content: o.content,
      timestamp: (o.at ?? new Date()).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: /@(everyone|here)\b/.test(o.content),
      mentions: mentioned,
      mention_roles: [...o.content.matchAll(/<@&(\d+)>/g)].map((m) => m[1] ?? ""),
      attachments: (o.attachments ?? []).map((a) => {
        const aid = snowflake();
        const url = `https://cdn.example.invalid/attachments/${channel.id}/${aid}/${a.filename}`;
        return { id: aid, filename: a.filename, size: a.size ?? 1024, url, proxy_url: url, ...(a.contentType ? { content_type: a.contentType } : {}) };
      }),
      embeds: [],
      pinned: false,
      type: o.type ?? (o.replyTo ? 19 : 0),
      flags: 0,
      components: [],
      ...(o.replyTo ? { message_reference: { type: 0, message_id: o.replyTo, channel_id: channel.id, ...(guildId ? { guild_id: guildId } : {}) } } : {}),
      ...(referenced !== undefined ? { referenced_message: referenced } : {}),
      ...(channel.type === 1 ? { channel_type: 1 } : {}),
      ...(o.webhookId ? { webhook_id: o.webhookId } : {}),
    };
    return msg;
  };

  // -------------------------------------------------------------------------------------------
  // Gateway
  // -------------------------------------------------------------------------------------------

  /** Sessions by id, in the order they were identified. */
  const sessions = new Map<string, Session>();
  /** The session each socket carries (the last it identified or resumed). */
  const sessionOf = new Map<WebSocket, Session>();
  /** Sockets the fake closed itself (dropConnection): their close never ends a session. */
  const dropped = new WeakSet<WebSocket>();
  let holding = false;
  const sockets = new Set<WebSocket>();

  const sendFrame = (ws: WebSocket, frame: unknown): void => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
  };

  const dispatchTo = (session: Session, t: string, d: unknown): void => {
    const entry = { s: ++session.seq, t, d };
    session.log.push(entry);
    if (session.socket && !holding) sendFrame(session.socket, { op: 0, ...entry });
  };

  /** To every session (of those `to` picks): each of an unsharded bot's sessions gets every event. */
  const dispatch = (t: string, d: unknown, to: (s: Session) => boolean = () => true): void => {
    if (gateway.identifies === 0) throw new Error(`fake discord: ${t} dispatched before any client identified`);
    for (const session of sessions.values()) if (to(session)) dispatchTo(session, t, d);
  };

  const wss = new WebSocketServer({ noServer: true });
  wss.on("connection", (ws: WebSocket, req: http.IncomingMessage) => {
    sockets.add(ws);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    connections.push({ path: url.pathname, query: Object.fromEntries(url.searchParams) });
    ws.on("close", (code: number) => {
      sockets.delete(ws);
      const session = sessionOf.get(ws);
      sessionOf.delete(ws);
      if (session?.socket !== ws) return;
      session.socket = null;
      // A client closing cleanly ends its session, as on Discord; any other close leaves it resumable.
      if (!dropped.has(ws) && (code === 1000 || code === 1001)) sessions.delete(session.id);
    });
    ws.on("error", () => {});
    sendFrame(ws, { op: 10, d: { heartbeat_interval: heartbeatInterval }, s: null, t: null });
    ws.on("message", (raw: Buffer) => {
      let json: unknown;
      try {
        json = JSON.parse(raw.toString("utf8"));
      } catch {
        ws.close(4002, "Error while decoding payload.");
        return;
      }
      const frame = GatewayFrame.safeParse(json);
      if (!frame.success) return ws.close(4002, "Error while decoding payload.");
      const { op, d } = frame.data;
      if (op === 1) {
        gateway.heartbeats++;
        sendFrame(ws, { op: 11, d: null, s: null, t: null });
      } else if (op === 2) {
        identify(ws, d);
      } else if (op === 6) {
        resume(ws, d);
      }
      // Other opcodes (presence updates, member requests) are accepted and ignored.
    });
  });

  function identify(ws: WebSocket, d: unknown): void {
    const parsed = IdentifyData.safeParse(d);
    if (!parsed.success) return ws.close(4002, "Error while decoding payload.");
    if (parsed.data.token !== token) return ws.close(4004, "Authentication failed.");
    if (opts.privilegedIntents === false && (parsed.data.intents & PRIVILEGED_INTENTS) !== 0) return ws.close(4014, "Disallowed intent(s).");
    gateway.identifies++;
    gateway.intents = parsed.data.intents;
    const session: Session = { id: randomBytes(16).toString("hex"), seq: 0, log: [], intents: parsed.data.intents, socket: ws };
    sessions.set(session.id, session);
    sessionOf.set(ws, session);
    dispatchTo(session, "READY", {
      v: 10,
      user: { ...apiUser(bot), bot: true, verified: true, mfa_enabled: false, flags: 0 },
      guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
      session_id: session.id,
      session_type: "normal",
      resume_gateway_url: `ws://127.0.0.1:${port}/resume`,
      shard: [0, 1],
      application: { id: applicationId, flags: 0 },
      private_channels: [],
      presences: [],
      relationships: [],
      geo_ordered_rtc_regions: [],
      guild_join_requests: [],
      user_settings: {},
      auth: {},
    });
    for (const g of guilds) dispatchTo(session, "GUILD_CREATE", guildCreate(g));
  }

  function resume(ws: WebSocket, d: unknown): void {
    const parsed = ResumeData.safeParse(d);
    const s = parsed.success ? sessions.get(parsed.data.session_id) : undefined;
    if (!parsed.success || !s || parsed.data.token !== token || (parsed.data.seq ?? 0) > s.seq) {
      gateway.invalidSessions++;
      sendFrame(ws, { op: 9, d: false, s: null, t: null });
      return;
    }
    gateway.resumes++;
    s.socket = ws;
    sessionOf.set(ws, s);
    const from = parsed.data.seq ?? 0;
    for (const entry of s.log) if (entry.s > from) sendFrame(ws, { op: 0, ...entry });
    // RESUMED takes a sequence number but is not replayed by a later resume.
    sendFrame(ws, { op: 0, t: "RESUMED", s: ++s.seq, d: {} });
  }

  // -------------------------------------------------------------------------------------------
  // REST
  // -------------------------------------------------------------------------------------------

  const server = http.createServer((req, res) => {
    void handleRest(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { message: `fake crashed: ${String(err)}`, code: 0 });
      else res.destroy();
    });
  });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path !== "/gateway" && path !== "/resume") return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    if (status === 204) {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  async function handleRest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(req);
    const headers = flattenHeaders(req.headers);
    let body: unknown = null;
    if (raw && (headers["content-type"] ?? "").includes("application/json")) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    // Decoded: discord.js sends "@original" as "%40original".
    const call: RestCall = { seq: ++restSeq, method, path: decodeURIComponent(url.pathname).replace(/^\/api\/v10/, ""), query: Object.fromEntries(url.searchParams), headers, body, status: 0 };
    restCalls.push(call);
    const reply = (status: number, payload: unknown, extra: Record<string, string> = {}): void => {
      call.status = status;
      send(res, status, payload, extra);
    };

    if (!url.pathname.startsWith("/api/v10/")) return reply(404, { message: "404: Not Found", code: 0 });
    const failure = failures.find((f) => f.remaining > 0 && f.route.method === method && f.route.path.test(call.path));
    if (failure) {
      failure.remaining--;
      return reply(failure.status, failure.body, failure.headers);
    }
    // Interaction callbacks and webhooks are authorized by their token in the path, not the bot token.
    const tokenRoute = /^\/(interactions|webhooks)\//.test(call.path);
    if (!tokenRoute && headers["authorization"] !== `Bot ${token}`) return reply(401, { message: "401: Unauthorized", code: 0 });
    route(method, call.path, url.searchParams, body, reply);
  }

  type Reply = (status: number, payload: unknown, extra?: Record<string, string>) => void;

  const unknownChannel = (reply: Reply) => reply(404, { message: "Unknown Channel", code: 10003 });

  function route(method: string, path: string, query: URLSearchParams, body: unknown, reply: Reply): void {
    let m: RegExpExecArray | null;
    if (method === "GET" && (path === "/gateway/bot" || path === "/gateway")) {
      return reply(200, {
        url: `ws://127.0.0.1:${port}/gateway`,
        ...(path === "/gateway/bot" ? { shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 } } : {}),
      });
    }
    if (method === "GET" && path === "/users/@me") return reply(200, { ...apiUser(bot), bot: true, verified: true, mfa_enabled: false, flags: 0 });
    if (method === "GET" && path === "/applications/@me") {
      // The portal's privileged intents as application flags: Message Content as for a bot in fewer
      // than 100 servers (GATEWAY_MESSAGE_CONTENT_LIMITED), and Server Members (GATEWAY_GUILD_MEMBERS_LIMITED).
      const flags = opts.privilegedIntents === false ? 0 : (1 << 19) | (1 << 15);
      return reply(200, { id: applicationId, name: bot.username, description: "", bot_public: true, bot_require_code_grant: false, flags, bot: apiUser(bot) });
    }
    if (method === "GET" && (m = /^\/users\/(\d+)$/.exec(path))) {
      const u = users.get(m[1]!);
      return u ? reply(200, apiUser(u)) : reply(404, { message: "Unknown User", code: 10013 });
    }
    if (method === "POST" && path === "/users/@me/channels") {
      const parsed = z.looseObject({ recipient_id: z.string() }).safeParse(body);
      const u = parsed.success ? users.get(parsed.data.recipient_id) : undefined;
      if (!u) return reply(400, { message: "Invalid Recipient(s)", code: 50033 });
      return reply(200, channelObject(channels.get(dmChannel(u))!));
    }
    if (method === "GET" && (m = /^\/channels\/(\d+)$/.exec(path))) {
      const c = channels.get(m[1]!);
      return c ? reply(200, channelObject(c)) : unknownChannel(reply);
    }
    if ((m = /^\/channels\/(\d+)\/messages$/.exec(path))) {
      const c = channels.get(m[1]!);
      if (!c) return unknownChannel(reply);
      if (method === "GET") {
        const limit = Math.min(100, Number(query.get("limit") ?? 50));
        const before = query.get("before");
        const list = [...messages.values()]
          .filter((x) => x.channel_id === c.id && (before === null || BigInt(x.id) < BigInt(before)))
          .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
        return reply(200, list.slice(0, limit));
      }
      if (method === "POST") return createMessage(c, body, reply);
    }
    if ((m = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path))) {
      const msg = messages.get(m[2]!);
      if (!msg || msg.channel_id !== m[1]) return reply(404, { message: "Unknown Message", code: 10008 });
      if (method === "GET") return reply(200, msg);
      if (msg.author.id !== bot.id) return reply(403, { message: "Cannot edit a message authored by another user", code: 50005 });
      if (method === "PATCH") {
        const parsed = CreateMessageBody.safeParse(body);
        if (!parsed.success) return reply(400, invalidForm(parsed.error));
        const problem = messageProblem(parsed.data);
        if (problem) return reply(400, problem);
        const edited = store({ ...msg, ...changes(parsed.data), edited_timestamp: new Date().toISOString() });
        posts.push({ ...postOf(edited), via: "edit" });
        return reply(200, edited);
      }
      if (method === "DELETE") {
        messages.delete(msg.id);
        posts.push({ ...postOf(msg), flags: 0, via: "delete" });
        return reply(204, null);
      }
    }
    if (method === "GET" && (m = /^\/guilds\/(\d+)\/members\/(\d+)$/.exec(path))) {
      const members = guildMembers.get(m[1]!);
      if (!members) return reply(404, { message: "Unknown Guild", code: 10004 });
      const roles = members.get(m[2]!);
      const u = users.get(m[2]!);
      return roles && u ? reply(200, member(u, roles)) : reply(404, { message: "Unknown Member", code: 10007 });
    }
    if (method === "GET" && (m = /^\/guilds\/(\d+)\/threads\/active$/.exec(path))) {
      if (!guildMembers.has(m[1]!)) return reply(404, { message: "Unknown Guild", code: 10004 });
      const active = [...channels.values()].filter((c) => c.guildId === m![1] && (c.type === 11 || c.type === 12) && !c.archived);
      return reply(200, { threads: active.map(channelObject), members: [] });
    }
    if (method === "GET" && (m = /^\/channels\/(\d+)\/threads\/archived\/public$/.exec(path))) {
      if (!channels.has(m[1]!)) return unknownChannel(reply);
      const archived = [...channels.values()].filter((c) => c.parentId === m![1] && c.type === 11 && c.archived);
      return reply(200, { threads: archived.map(channelObject), members: [], has_more: false });
    }
    if (method === "POST" && (m = /^\/channels\/(\d+)\/typing$/.exec(path))) {
      return channels.has(m[1]!) ? reply(204, null) : unknownChannel(reply);
    }
    if (method === "POST" && (m = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path))) {
      return interactionCallback(m[1]!, m[2]!, query, body, reply);
    }
    if ((m = /^\/webhooks\/(\d+)\/([^/]+)(\/messages\/(@original|\d+))?$/.exec(path))) {
      return webhook(method, m[1]!, m[2]!, m[4] ?? null, body, reply);
    }
    if (method === "PUT" && (m = /^\/applications\/(\d+)(\/guilds\/(\d+))?\/commands$/.exec(path))) {
      if (m[1] !== applicationId) return reply(403, { message: "Missing Access", code: 50001 });
      const parsed = CommandsBody.safeParse(body);
      if (!parsed.success) return reply(400, { message: "Invalid Form Body", code: 50035, errors: z.treeifyError(parsed.error) });
      return reply(
        200,
        parsed.data.map((c) => ({ ...c, id: snowflake(), application_id: applicationId, version: snowflake(), ...(m?.[3] ? { guild_id: m[3] } : {}) })),
      );
    }
    reply(404, { message: "404: Not Found", code: 0 });
  }

  /** A 400 Invalid Form Body, with Discord's nested errors under `prefix` (`data` for an interaction answer). */
  const invalidForm = (error: z.ZodError, prefix: readonly string[] = []) => ({ message: "Invalid Form Body", code: 50035, errors: formErrors(error, prefix) });

  /** What Discord refuses in a message beyond its shape: content over 2,000, embeds over 6,000 in all or empty, repeated custom ids. */
  function messageProblem(b: { content?: string | undefined; embeds?: Embed[] | undefined; components?: ComponentRow[] | undefined }, prefix: readonly string[] = []): Record<string, unknown> | null {
    const at = (key: string, code: string, message: string): Record<string, unknown> => {
      const errors: Record<string, unknown> = {};
      let node = errors;
      for (const k of prefix) node = node[k] = {} as Record<string, unknown>;
      node[key] = { _errors: [{ code, message }] };
      return { message: "Invalid Form Body", code: 50035, errors };
    };
    if ((b.content ?? "").length > 2000) return at("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.");
    const embeds = b.embeds ?? [];
    if (embedChars(embeds) > 6000) return at("embeds", "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000");
    if (embeds.some((e) => !e.title && !e.description && !e.fields?.length && !e.footer)) return at("embeds", "BASE_TYPE_REQUIRED", "An embed cannot be empty");
    const duplicated = duplicateIds(b.components ?? [], prefix);
    return duplicated ? { message: "Invalid Form Body", code: 50035, errors: duplicated } : null;
  }

  /** The fields an edit or update sets; those it leaves out stay as they were. */
  const changes = (b: { content?: string | undefined; embeds?: Embed[] | undefined; components?: ComponentRow[] | undefined }): Partial<ApiMessage> => ({
    ...(b.content !== undefined ? { content: b.content } : {}),
    ...(b.embeds !== undefined ? { embeds: b.embeds } : {}),
    ...(b.components !== undefined ? { components: b.components } : {}),
  });

  const postOf = (msg: ApiMessage): Omit<PostedMessage, "via"> => ({
    id: msg.id,
    channelId: msg.channel_id,
    content: msg.content,
    replyTo: msg.message_reference?.message_id ?? null,
    flags: msg.flags,
    allowedMentions: null,
    embeds: msg.embeds as Embed[],
    components: msg.components,
  });

  /** Messages made with enforce_nonce, by author and nonce (Discord keeps them "a few minutes"). */
  const nonced = new Map<string, { id: string; at: number }>();
  const nonceReturns: { nonce: string; messageId: string }[] = [];

  function createMessage(c: ChannelRecord, body: unknown, reply: Reply): void {
    const parsed = CreateMessageBody.safeParse(body);
    if (!parsed.success) return reply(400, invalidForm(parsed.error));
    const b = parsed.data;
    const problem = messageProblem(b);
    if (problem) return reply(400, problem);
    if (!b.content && !(b.embeds?.length ?? 0) && !(b.components?.length ?? 0)) return reply(400, { message: "Cannot send an empty message", code: 50006 });
    const embeds = b.embeds ?? [];
    const ref = b.message_reference;
    const referenced = ref ? messages.get(ref.message_id) : undefined;
    if (ref && !referenced && ref.fail_if_not_exists !== false) {
      return reply(400, { message: "Invalid Form Body", code: 50035, errors: { message_reference: { _errors: [{ code: "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", message: "Unknown message" }] } } });
    }
    // enforce_nonce: the message this author made with this nonce in the last few minutes comes back, and none is made.
    const nonceKey = b.nonce !== undefined && b.enforce_nonce ? `${bot.id}:${String(b.nonce)}` : null;
    const earlier = nonceKey ? nonced.get(nonceKey) : undefined;
    const existing = earlier && Date.now() - earlier.at < NONCE_WINDOW_MS ? messages.get(earlier.id) : undefined;
    if (existing) {
      nonceReturns.push({ nonce: String(b.nonce), messageId: existing.id });
      const { guild_id: _eg, member: _em, channel_type: _et, ...existingObject } = existing;
      return reply(200, { ...existingObject, nonce: b.nonce });
    }
    const msg = store({
      ...buildMessage({ channelId: c.id, author: bot, content: b.content ?? "", ...(referenced ? { replyTo: referenced.id } : {}) }),
      flags: b.flags ?? 0,
      embeds,
      components: b.components ?? [],
    });
    if (nonceKey) nonced.set(nonceKey, { id: msg.id, at: Date.now() });
    // The REST answer carries no guild_id or member, as Discord's does not.
    const { guild_id: _g, member: _m, channel_type: _t, ...restObject } = msg;
    posts.push({ ...postOf(msg), replyTo: referenced?.id ?? null, allowedMentions: b.allowed_mentions ?? null, via: "channel" });
    reply(200, b.nonce !== undefined ? { ...restObject, nonce: b.nonce } : restObject);
    if (echo && gateway.identifies > 0) dispatch("MESSAGE_CREATE", msg);
  }

  function interactionCallback(id: string, itoken: string, query: URLSearchParams, body: unknown, reply: Reply): void {
    const it = interactions.get(id);
    if (!it || it.token !== itoken) return reply(404, { message: "Unknown interaction", code: 10062 });
    const parsed = InteractionCallbackBody.safeParse(body);
    const alreadyAcknowledged = (): void => {
      refusedCallbacks.push({ interactionId: id, type: parsed.success ? parsed.data.type : null });
      reply(400, { message: "Interaction has already been acknowledged.", code: 40060 });
    };
    if (it.acked) return alreadyAcknowledged();
    if (!parsed.success) return reply(400, invalidForm(parsed.error));
    const { type } = parsed.data;
    const answered = (created?: ApiMessage): void => {
      it.acked = true;
      // As Discord answers `with_response`: the message a type 4 answer made, and its id.
      if (query.get("with_response") === "true") {
        return reply(200, { interaction: { id, type: it.type, ...(created ? { response_message_id: created.id } : {}) }, resource: { type, ...(created ? { message: created } : {}) } });
      }
      reply(204, null);
    };
    if (type === 9) {
      // A modal answers a command or a click; never another modal's submission.
      if (it.type === 5) return alreadyAcknowledged();
      const modal = ModalSchema.safeParse(parsed.data.data);
      if (!modal.success) return reply(400, invalidForm(modal.error, ["data"]));
      modals.push({
        interactionId: id,
        channelId: it.channelId,
        messageId: it.sourceMessageId,
        customId: modal.data.custom_id,
        title: modal.data.title,
        inputs: modal.data.components.flatMap((c) => (c.type === 18 ? [{ input: c.component, label: c.label }] : c.components.map((t) => ({ input: t, label: t.label ?? "" })))).map(({ input, label }) => ({
          customId: input.custom_id,
          label,
          style: input.style,
          required: input.required ?? true,
          ...(input.value !== undefined ? { value: input.value } : {}),
          ...(input.max_length !== undefined ? { maxLength: input.max_length } : {}),
        })),
      });
      return answered();
    }
    const data = CallbackMessageData.safeParse(parsed.data.data ?? {});
    if (!data.success) return reply(400, invalidForm(data.error, ["data"]));
    const problem = messageProblem(data.data, ["data"]);
    if (problem) return reply(400, problem);
    const d = data.data;
    if (type === 4) {
      if (!d.content && !(d.embeds?.length ?? 0) && !(d.components?.length ?? 0)) return reply(400, { message: "Cannot send an empty message", code: 50006 });
      const msg = store({ ...buildMessage({ channelId: it.channelId, author: bot, content: d.content ?? "" }), flags: d.flags ?? 0, type: 20, embeds: d.embeds ?? [], components: d.components ?? [] });
      it.originalId = msg.id;
      posts.push({ ...postOf(msg), via: "interaction", interactionId: id });
      return answered(msg);
    } else if (type === 5) {
      it.deferredFlags = d.flags ?? 0;
    } else if (type === 6 || type === 7) {
      // Only a click (or a modal opened by one) has a message to update.
      const source = it.sourceMessageId ? messages.get(it.sourceMessageId) : undefined;
      if (!source) return reply(400, { message: "Invalid interaction response type: this interaction has no message to update", code: 50035 });
      it.originalId = source.id;
      if (type === 7) {
        const msg = store({ ...source, ...changes(d), edited_timestamp: new Date().toISOString() });
        posts.push({ ...postOf(msg), via: "update", interactionId: id });
      }
    } else {
      return reply(400, { message: "Invalid Form Body", code: 50035, errors: { type: { _errors: [{ code: "BASE_TYPE_CHOICES", message: `Value must be one of {1, 4, 5, 6, 7, 8, 9, 10, 12}.` }] } } });
    }
    answered();
  }

  function webhook(method: string, appId: string, wtoken: string, messageId: string | null, body: unknown, reply: Reply): void {
    const entry = [...interactions.entries()].find(([, v]) => v.token === wtoken);
    if (appId !== applicationId || !entry) return reply(404, { message: "Unknown Webhook", code: 10015 });
    const [interactionId, it] = entry;
    if (method === "DELETE" && messageId) {
      // The original may be a deferral's placeholder, which this fake does not store as a message.
      const id = messageId === "@original" ? it.originalId : messageId;
      const existing = id ? messages.get(id) : undefined;
      if (id) messages.delete(id);
      posts.push({ id: id ?? messageId, channelId: it.channelId, content: existing?.content ?? "", replyTo: null, flags: existing?.flags ?? 0, allowedMentions: null, via: "delete", interactionId, embeds: [], components: [] });
      return reply(204, null);
    }
    const parsed = CreateMessageBody.safeParse(body);
    if (!parsed.success) return reply(400, invalidForm(parsed.error));
    const problem = messageProblem(parsed.data);
    if (problem) return reply(400, problem);
    const b = parsed.data;
    if (method === "PATCH" && messageId) {
      const id = messageId === "@original" ? it.originalId : messageId;
      const existing = id ? messages.get(id) : undefined;
      // A deferred answer's placeholder becomes a message with the deferral's flags.
      const base = existing ?? { ...buildMessage({ channelId: it.channelId, author: bot, content: "" }, id ?? snowflake()), flags: it.deferredFlags, type: 20 };
      const msg = store({ ...base, ...changes(b) });
      it.originalId = msg.id;
      posts.push({ ...postOf(msg), via: "edit", interactionId });
      return reply(200, msg);
    }
    if (method === "POST" && !messageId) {
      const msg = store({ ...buildMessage({ channelId: it.channelId, author: bot, content: b.content ?? "" }), flags: b.flags ?? 0, type: 20, embeds: b.embeds ?? [], components: b.components ?? [] });
      posts.push({ ...postOf(msg), via: "followup", interactionId });
      return reply(200, msg);
    }
    reply(405, { message: "405: Method Not Allowed", code: 0 });
  }

  const port = await listenLocal(server);

  function dmChannel(user: FakeUser): string {
    users.set(user.id, user);
    let id = dmByUser.get(user.id);
    if (!id) {
      id = snowflake();
      dmByUser.set(user.id, id);
      channels.set(id, { id, type: 1, recipient: user });
    }
    return id;
  }

  const interactionBase = (user: FakeUser, channelId: string): Record<string, unknown> => {
    const c = channels.get(channelId);
    if (!c) throw new Error(`fake discord: unknown channel ${channelId}`);
    users.set(user.id, user);
    return {
      application_id: applicationId,
      version: 1,
      channel: channelObject(c),
      channel_id: c.id,
      app_permissions: "277025459200",
      locale: "en-US",
      entitlements: [],
      ...(c.guildId
        ? { guild_id: c.guildId, guild_locale: "en-US", member: { ...member(user), permissions: "2248473465835073" }, authorizing_integration_owners: { "0": c.guildId }, context: 0 }
        : { user: apiUser(user), authorizing_integration_owners: { "0": "0" }, context: 1 }),
    };
  };

  /** A message as an interaction payload carries it: no guild_id or member, as in REST answers. */
  const interactionMessage = (msg: ApiMessage): Omit<ApiMessage, "guild_id" | "member" | "channel_type"> => {
    const { guild_id: _g, member: _m, channel_type: _t, ...rest } = msg;
    return rest;
  };

  const registerInteraction = (payload: Record<string, unknown>): string => {
    const id = typeof payload["id"] === "string" ? payload["id"] : snowflake();
    const itoken = typeof payload["token"] === "string" ? payload["token"] : `itoken-${randomBytes(8).toString("hex")}`;
    const channelId = typeof payload["channel_id"] === "string" ? payload["channel_id"] : "";
    const source = z.looseObject({ id: z.string() }).safeParse(payload["message"]);
    const type = typeof payload["type"] === "number" ? payload["type"] : 0;
    interactions.set(id, { token: itoken, acked: false, originalId: null, channelId, type, sourceMessageId: source.success ? source.data.id : null, deferredFlags: 0 });
    dispatch("INTERACTION_CREATE", { ...payload, id, token: itoken });
    return id;
  };

  return {
    apiUrl: `http://127.0.0.1:${port}/api`,
    gatewayUrl: `ws://127.0.0.1:${port}/gateway`,
    token,
    applicationId,
    bot,
    restCalls,
    posts,
    nonceReturns,
    connections,
    gateway,
    sessions: () => [...sessions.values()].map((x) => ({ id: x.id, connected: x.socket !== null, dispatched: x.log.map((e) => e.t) })),
    refusedCallbacks,
    message: (id) => messages.get(id),
    messagesIn: (channelId) => [...messages.values()].filter((m) => m.channel_id === channelId).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)),
    botRole: (guildId) => {
      const role = botRoles.get(guildId);
      if (!role) throw new Error(`fake discord: unknown guild ${guildId}`);
      return role;
    },
    dmChannel,
    sendMessage(o) {
      const msg = store(buildMessage(o));
      if (!o.offline) dispatch("MESSAGE_CREATE", msg);
      return msg;
    },
    sendDm(author, content, extra = {}) {
      const msg = store(buildMessage({ ...extra, channelId: dmChannel(author), author, content }));
      dispatch("MESSAGE_CREATE", msg);
      return msg;
    },
    redispatch(messageId) {
      const msg = messages.get(messageId);
      if (!msg) throw new Error(`fake discord: unknown message ${messageId}`);
      dispatch("MESSAGE_CREATE", msg);
    },
    dispatchRaw: (t, d) => dispatch(t, d),
    seedMessage: (o) => store(buildMessage({ ...o, at: o.at ?? new Date(Date.now() - 60_000) })),
    seedMessages: (channelId, list) => list.map((o) => store(buildMessage({ ...o, channelId }))),
    editMessage(messageId, content) {
      const msg = messages.get(messageId);
      if (!msg) throw new Error(`fake discord: unknown message ${messageId}`);
      const edited = store({ ...msg, content, edited_timestamp: new Date().toISOString() });
      dispatch("MESSAGE_UPDATE", edited);
      return edited;
    },
    deleteMessages(channelId, ids) {
      const c = channels.get(channelId);
      if (!c) throw new Error(`fake discord: unknown channel ${channelId}`);
      for (const id of ids) messages.delete(id);
      const where = { channel_id: c.id, ...(c.guildId ? { guild_id: c.guildId } : {}) };
      if (ids.length === 1) dispatch("MESSAGE_DELETE", { id: ids[0], ...where });
      else dispatch("MESSAGE_DELETE_BULK", { ids, ...where });
    },
    setMemberRoles(guildId, user, roles) {
      const members = guildMembers.get(guildId);
      if (!members) throw new Error(`fake discord: unknown guild ${guildId}`);
      users.set(user.id, user);
      members.set(user.id, [...roles]);
      dispatch("GUILD_MEMBER_UPDATE", { guild_id: guildId, ...member(user, roles) }, wantsMemberEvents);
    },
    removeMember(guildId, user) {
      guildMembers.get(guildId)?.delete(user.id);
      dispatch("GUILD_MEMBER_REMOVE", { guild_id: guildId, user: apiUser(user) }, wantsMemberEvents);
    },
    setOverwrites(channelId, overwrites) {
      const c = channels.get(channelId);
      if (!c?.guildId || c.type !== 0) throw new Error(`fake discord: ${channelId} is not a guild text channel`);
      c.overwrites = [...overwrites];
      dispatch("CHANNEL_UPDATE", channelObject(c));
    },
    deleteChannel(channelId) {
      const c = channels.get(channelId);
      if (!c) throw new Error(`fake discord: unknown channel ${channelId}`);
      channels.delete(channelId);
      dispatch(c.type === 11 || c.type === 12 ? "THREAD_DELETE" : "CHANNEL_DELETE", channelObject(c));
    },
    createThread(o) {
      const id = o.id ?? snowflake();
      channels.set(id, { id, type: 11, name: o.name, guildId: o.guildId, parentId: o.parentId });
      dispatch("THREAD_CREATE", { ...channelObject(channels.get(id)!), owner_id: o.owner.id, newly_created: true });
      return id;
    },
    react(o) {
      const c = channels.get(o.channelId);
      if (!c) throw new Error(`fake discord: unknown channel ${o.channelId}`);
      users.set(o.user.id, o.user);
      const emoji = typeof o.emoji === "string" ? { id: null, name: o.emoji } : { id: o.emoji.id, name: o.emoji.name, animated: false };
      const target = messages.get(o.messageId);
      dispatch(o.remove ? "MESSAGE_REACTION_REMOVE" : "MESSAGE_REACTION_ADD", {
        user_id: o.user.id,
        channel_id: c.id,
        message_id: o.messageId,
        emoji,
        burst: false,
        type: 0,
        ...(c.guildId ? { guild_id: c.guildId } : {}),
        ...(c.guildId && !o.remove ? { member: member(o.user) } : {}),
        ...(target && !o.remove ? { message_author_id: target.author.id } : {}),
        ...(!o.remove ? { burst_colors: [] } : {}),
      });
    },
    sendCommand(o) {
      const sub = o.subcommand;
      return registerInteraction({
        ...interactionBase(o.user, o.channelId),
        type: 2,
        data: {
          id: snowflake(),
          name: o.command ?? "cairn",
          type: 1,
          options: sub ? [{ name: sub, type: 1, options: Object.entries(o.options ?? {}).map(([name, value]) => ({ name, type: typeof value === "boolean" ? 5 : 3, value })) }] : [],
        },
      });
    },
    sendMessageCommand(o) {
      const msg = messages.get(o.messageId);
      if (!msg) throw new Error(`fake discord: unknown message ${o.messageId}`);
      return registerInteraction({
        ...interactionBase(o.user, msg.channel_id),
        type: 2,
        data: { id: snowflake(), name: o.name, type: 3, target_id: msg.id, resolved: { messages: { [msg.id]: interactionMessage(msg) } } },
      });
    },
    sendInteraction(payload) {
      const user = users.get(String(payload["user_id"] ?? "")) ?? [...users.values()].find((u) => !u.bot) ?? bot;
      const channelId = String(payload["channel_id"] ?? "");
      const { user_id: _u, ...rest } = payload;
      return registerInteraction({ ...interactionBase(user, channelId), ...rest });
    },
    modals,
    click(o) {
      const msg = messages.get(o.messageId);
      if (!msg) throw new Error(`fake discord: unknown message ${o.messageId}`);
      const target = msg.components.flatMap((row) => row.components).find((b) => b.custom_id === o.customId);
      if (!target) throw new Error(`fake discord: message ${o.messageId} has no button ${o.customId} (it has ${msg.components.flatMap((r) => r.components.map((b) => b.custom_id)).join(", ") || "none"})`);
      if (target.disabled) throw new Error(`fake discord: button ${o.customId} is disabled`);
      return registerInteraction({
        ...interactionBase(o.user, o.channelId ?? msg.channel_id),
        type: 3,
        data: { custom_id: o.customId, component_type: 2 },
        message: interactionMessage(msg),
      });
    },
    submitModal(modal, user, values) {
      const fields = modal.inputs.map((input) => {
        const value = values[input.customId] ?? input.value ?? "";
        if (input.maxLength !== undefined && value.length > input.maxLength) throw new Error(`fake discord: ${input.customId} takes at most ${input.maxLength} characters`);
        if (input.required && !value) throw new Error(`fake discord: ${input.customId} is required`);
        return { customId: input.customId, value };
      });
      const source = modal.messageId ? messages.get(modal.messageId) : undefined;
      return registerInteraction({
        ...interactionBase(user, modal.channelId),
        type: 5,
        data: {
          custom_id: modal.customId,
          components: fields.map((f, i) => ({ type: 18, id: 2 * i + 1, component: { type: 4, id: 2 * i + 2, custom_id: f.customId, value: f.value } })),
        },
        ...(source ? { message: interactionMessage(source) } : {}),
      });
    },
    hold(on) {
      holding = on;
    },
    expireSession(sessionId) {
      if (sessionId === undefined) sessions.clear();
      else sessions.delete(sessionId);
    },
    async dropConnection(how = "terminate", sessionId) {
      const targets = sessionId === undefined ? [...sockets] : [...sockets].filter((ws) => sessionOf.get(ws)?.id === sessionId);
      await Promise.all(
        targets.map((ws) => {
          dropped.add(ws);
          const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
          if (how === "terminate") ws.terminate();
          else ws.close(how, "fake drop");
          return closed;
        }),
      );
    },
    rateLimitNext(route, count, retryAfter = 0.05) {
      failures.push({
        route,
        remaining: count,
        status: 429,
        body: { message: "You are being rate limited.", retry_after: retryAfter, global: false },
        headers: {
          "retry-after": String(retryAfter),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(retryAfter),
          "x-ratelimit-bucket": `fake-${route.method}-${route.path.source}`.replace(/[^a-zA-Z0-9-]/g, ""),
          "x-ratelimit-scope": "user",
        },
      });
    },
    failNext(route, count, status, body) {
      failures.push({ route, remaining: count, status, body, headers: {} });
    },
    calls: (method, path) => restCalls.filter((c) => c.method === method && path.test(c.path)),
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false (null, 0 and "" count as values). */
export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 5_000): Promise<T> {
  const box = await waitUntil(
    what,
    async () => {
      const value = await check();
      return value !== undefined && value !== false ? { value } : undefined;
    },
    timeoutMs,
  );
  return box.value;
}

