/**
 * A fake Slack: the Web API over node:http, the Socket Mode WebSocket, response_url endpoints, and a
 * client that posts signed Events API requests and interactions, all on 127.0.0.1.
 *
 * Why a server and not a mocked Bolt: what breaks in production lives on the wire (form-encoded
 * bodies, Bearer tokens, 429 + Retry-After, the envelope/ack protocol, v0 signatures), and the real
 * Bolt, WebClient and SocketModeClient must cross it. The fake keeps a small message store so that
 * `conversations.replies` sees what was seeded and what the bot posted, and records every call.
 *
 * For several processes (test/cluster): each connects with an app token of its own
 * (`appTokenFor(label)`), so every connection is known by its process's label; an envelope can go
 * over one chosen connection or two (`socketSpread` picks them, as Slack spreads events over an
 * app's connections and sometimes delivers one twice), and one nobody acknowledges is delivered
 * again over another; every ack says which connection it came over, and `botPosts` is every
 * chat.postMessage with its channel, thread, current text and time.
 *
 * For channel knowledge: `conversations.history` and `conversations.replies` page with cursors (and
 * `setPageMax` makes them return fewer than asked, as Slack may), a thread's first message carries
 * its reply_count; `conversations.members` pages over `joinChannel`'s members, `conversations.info`
 * tells channels, DMs and group DMs (`groupDm`) apart; `seedHistory` puts thousands of messages in a
 * channel at once; `messageChanged`, `messageDeleted`, `memberJoined` and `memberLeft` change the
 * store as Slack would and return the event Slack sends for it, to post signed or push over a socket.
 */
import http from "node:http";
import { createHmac, randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { listenLocal, readBody, waitUntil } from "./http.ts";
import { BOT_SCOPES } from "../../src/platforms/slack/scopes.ts";

export const BOT_TOKEN = "xoxb-fake-bot-token";
export const APP_TOKEN = "xapp-fake-app-token";
export const SIGNING_SECRET = "fake-signing-secret";

export interface FakeBot {
  userId: string;
  botId: string;
  name: string;
  /** The workspace the bot token belongs to (auth.test's team_id). */
  teamId: string;
}

export interface SlackCall {
  /** 1-based arrival order. */
  seq: number;
  method: string;
  /** Form fields as strings (the WebClient's form encoding) or the JSON body's values. */
  args: Record<string, unknown>;
  token: string | null;
  contentType: string;
  /** Milliseconds since the epoch at arrival. */
  at: number;
  /** The HTTP status the fake answered with (429 when rate-limited). */
  status: number;
  /** Slack's `ok` flag of the answer (false for platform errors and 429s). */
  ok: boolean;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
  subtype?: string;
  /** Block Kit blocks the bot posted or last edited in (absent: text only). */
  blocks?: unknown[];
  /** Message metadata the bot posted with (returned only to reads with include_all_metadata). */
  metadata?: unknown;
}

export interface FakeUser {
  id: string;
  name: string;
  displayName: string;
  realName: string;
  isBot: boolean;
}

export interface SocketAck {
  envelope_id: string;
  payload: unknown;
  at: number;
  /** The connection the ack came over (SocketInfo.id). */
  socket: number;
}

/** A Socket Mode connection, open or closed. */
export interface SocketInfo {
  /** 1-based, in the order the connections opened. */
  id: number;
  /** What followed APP_TOKEN in the app token that opened it (`appTokenFor(label)`); "" for APP_TOKEN itself. */
  label: string;
  openedAt: number;
  closedAt: number | null;
}

/** One envelope sent over one connection (a redelivery is another row, its attempt one higher). */
export interface EnvelopeDelivery {
  envelopeId: string;
  socket: number;
  /** 0 for the first delivery, then Slack's retry_attempt. */
  attempt: number;
  at: number;
}

/** A message the bot posted with chat.postMessage; `text` follows its later edits. */
export interface BotPost {
  /** The chat.postMessage call's SlackCall.seq: the order posts reached Slack. */
  seq: number;
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  /** Milliseconds since the epoch when the post arrived. */
  at: number;
  deleted: boolean;
}

export interface PushOptions {
  retryAttempt?: number;
  retryReason?: string;
  /**
   * The connections to send it over (SocketInfo.id; a closed one is skipped). Unset: every open
   * connection, as before. Two ids are one post delivered twice, as Slack does on retries.
   */
  to?: readonly number[];
  /**
   * Slack's retry for an envelope nobody acknowledged: after this long without an ack, it is sent
   * again over another open connection (retry_attempt + 1, reason "timeout"), at most 3 times.
   */
  redeliverAfterMs?: number;
}

export interface ResponseUrlPost {
  id: string;
  body: Record<string, unknown>;
  at: number;
}

export interface SignedPostOptions {
  secret?: string;
  /** Seconds since the epoch; defaults to now (a stale one tests replay protection). */
  timestamp?: number;
  /** Replaces the computed signature (a forged request). */
  signature?: string;
  retryNum?: number;
  retryReason?: string;
  contentType?: "application/json" | "application/x-www-form-urlencoded";
}

/** A view the bot published (views.publish) or opened (views.open), as the fake stored and answered it. */
export interface FakeView {
  /** The call's SlackCall.seq. */
  seq: number;
  /** Whose Home tab it is, or who the modal was opened for (the trigger's user). */
  user: string;
  /** The view as Slack answers it: what the bot sent, with `id`, `team_id`, `hash` and an empty `state`. */
  view: FakeViewBody;
  at: number;
}

export interface FakeViewBody {
  id: string;
  type: string;
  blocks: FakeBlock[];
  private_metadata?: string;
  callback_id?: string;
  title?: { type: string; text: string };
  submit?: { type: string; text: string };
  [key: string]: unknown;
}

export interface FakeBlock {
  type: string;
  block_id?: string;
  text?: { type: string; text: string };
  accessory?: FakeElement;
  elements?: FakeElement[];
  element?: FakeElement;
  label?: { type: string; text: string };
  [key: string]: unknown;
}

export interface FakeElement {
  type: string;
  action_id?: string;
  value?: string;
  text?: { type: string; text: string };
  style?: string;
  confirm?: Record<string, unknown>;
  initial_value?: string;
  max_length?: number;
  multiline?: boolean;
  [key: string]: unknown;
}

/** A button of a view, with the block it is in. */
export interface ViewButtonRef {
  actionId: string;
  blockId: string;
  value: string;
  label: string;
  style?: string;
  confirm?: Record<string, unknown>;
  /** The block holding the button (a section's accessory, or an actions block). */
  block: FakeBlock;
}

/** Every button of a view, in order: section accessories and actions blocks' elements. */
export function viewButtons(view: Pick<FakeViewBody, "blocks">): ViewButtonRef[] {
  return view.blocks.flatMap((block) =>
    [...(block.accessory ? [block.accessory] : []), ...(block.type === "actions" ? (block.elements ?? []) : [])]
      .filter((e) => e.type === "button")
      .map((e) => ({
        actionId: e.action_id ?? "",
        blockId: block.block_id ?? "",
        value: e.value ?? "",
        label: e.text?.text ?? "",
        ...(e.style ? { style: e.style } : {}),
        ...(e.confirm ? { confirm: e.confirm } : {}),
        block,
      })),
  );
}

/** How a test picks a button of a view: every given field must match. */
export interface ButtonPick {
  value?: string;
  label?: string;
  actionId?: string;
}

export interface FakeSlack {
  /** Web API base with trailing slash: pass as `slackApiUrl`. */
  readonly apiUrl: string;
  readonly origin: string;
  readonly bot: FakeBot;
  readonly calls: SlackCall[];
  readonly acks: SocketAck[];
  readonly responses: ResponseUrlPost[];
  /** Successful calls of one method. */
  callsTo(method: string): SlackCall[];
  /** The next `times` calls of `method` get 429 with `Retry-After: retryAfterSec`. */
  rateLimit(method: string, times: number, retryAfterSec: number): void;
  /**
   * The bot token's scopes, sent as Slack does in every answer to it (`x-oauth-scopes`); null
   * sends no header. Default: every scope the manifest asks for.
   */
  setScopes(scopes: readonly string[] | null): void;
  /** The next `times` calls of `method` (of those `when` accepts, if given) get `{ok:false, error}`. */
  failNext(method: string, error: string, times?: number, when?: (args: Record<string, unknown>) => boolean): void;
  addUser(user: Partial<FakeUser> & { id: string }): void;
  /** Adds a message to the store (as if posted by a person); returns its ts. */
  seedMessage(msg: Omit<StoredMessage, "ts"> & { ts?: string }): string;
  messages(channel: string): StoredMessage[];
  /** The DM channel between the bot and `user`, as conversations.open answers it (created on first use). */
  dmChannel(user: string): string;
  /** A fresh, increasing message timestamp from the clock, as Slack's ("1796173576.584100"). */
  nextTs(): string;
  /** Reactions currently on a message, by name. */
  reactionsOn(channel: string, ts: string): string[];
  /** A response_url served by this fake. */
  responseUrl(): string;
  /** Open Socket Mode connections. */
  socketCount(): number;
  /** Every Socket Mode connection so far, open and closed, in the order they opened. */
  sockets(): SocketInfo[];
  /** Every envelope sent, per connection. */
  readonly deliveries: EnvelopeDelivery[];
  /** Every message the bot posted (chat.postMessage), in arrival order, with its current text. */
  botPosts(): BotPost[];
  /** Calls `listener` with each bot post as it arrives; returns the unsubscribe. */
  onBotPost(listener: (post: BotPost) => void): () => void;
  /** Sends an envelope (to every open socket unless `opts.to` chooses); returns its envelope_id. */
  pushEnvelope(type: "events_api" | "slash_commands" | "interactive", payload: unknown, opts?: PushOptions): string;
  waitForAck(envelopeId: string, timeoutMs?: number): Promise<SocketAck>;
  waitForSocket(timeoutMs?: number): Promise<void>;
  /** Resolves once `pred()` holds, polling; rejects with `what` after `timeoutMs`. */
  waitFor<T>(what: string, pred: () => T | undefined | null | false, timeoutMs?: number): Promise<T>;
  /** Every Home view published (views.publish), oldest first; of one user if given. */
  homeViews(user?: string): FakeView[];
  /** The Home view `user` sees now (the last one published for them). */
  homeOf(user: string): FakeView | undefined;
  /** Every modal opened (views.open), oldest first; of one user if given. */
  modals(user?: string): FakeView[];
  /**
   * Channel membership, for users.conversations. A private channel is listed for a person only
   * when the bot is a member too (`joinChannel(bot.userId, …)`), as Slack answers a bot token.
   */
  joinChannel(user: string, channel: string, opts?: { private?: boolean; archived?: boolean }): void;
  leaveChannel(user: string, channel: string): void;
  /** The most channels users.conversations returns per page, whatever `limit` asks (default 100). */
  setListPageMax(max: number): void;
  /**
   * The most items `method` returns per page, whatever `limit` asks (conversations.history,
   * conversations.replies, conversations.members; default: as many as asked): a way to make a
   * backfill page through a channel, as Slack does when it returns fewer than asked.
   */
  setPageMax(method: "conversations.history" | "conversations.replies" | "conversations.members", max: number | null): void;
  /**
   * Adds many messages to a channel at once (sorted once: thousands stay quick), each with its own
   * ts; a reply names its thread with thread_ts. Returns their ts in the order given.
   */
  seedHistory(channel: string, messages: readonly (Omit<StoredMessage, "channel" | "ts"> & { ts: string })[]): string[];
  /** A group DM with these people (and the bot): conversations.info answers is_mpim for it. */
  groupDm(channel: string, members: readonly string[]): void;
  /** Edits a person's stored message and returns the `message_changed` event Slack sends for it. */
  messageChanged(channel: string, ts: string, text: string, opts?: { channelType?: string }): Record<string, unknown>;
  /** Deletes a stored message and returns the `message_deleted` event Slack sends for it. */
  messageDeleted(channel: string, ts: string, opts?: { channelType?: string }): Record<string, unknown>;
  /** Adds `user` to the channel's members and returns the `member_joined_channel` event. */
  memberJoined(user: string, channel: string, opts?: { inviter?: string }): Record<string, unknown>;
  /** Takes `user` out of the channel's members and returns the `member_left_channel` event. */
  memberLeft(user: string, channel: string): Record<string, unknown>;
  /** An `app_home_opened` event for `user`, with the Home view they see now, as Slack sends it. */
  appHomeOpened(user: string, opts?: { tab?: "home" | "messages"; channel?: string }): Record<string, unknown>;
  /**
   * A `block_actions` payload for a click by `user` on a button of a Home view (`from`, default the
   * one `user` sees now), with a fresh trigger_id that views.open accepts once.
   */
  homeAction(o: { teamId: string; user: string; pick: ButtonPick; from?: FakeView }): Record<string, unknown>;
  /**
   * A `view_submission` payload for `user` submitting `modal`; `values` by input block_id (an input
   * left out keeps its initial value), with a fresh trigger_id.
   */
  viewSubmission(o: { teamId: string; user: string; modal: FakeView; values?: Record<string, string> }): Record<string, unknown>;
  reset(): void;
  close(): Promise<void>;
}

/** An event_callback body, as Slack wraps every Events API event. */
export function eventCallback(teamId: string, event: Record<string, unknown>, opts: { eventId?: string; apiAppId?: string } = {}): Record<string, unknown> {
  return {
    token: "verification-token-unused",
    team_id: teamId,
    api_app_id: opts.apiAppId ?? "AFAKEAPP",
    event,
    type: "event_callback",
    event_id: opts.eventId ?? `Ev${randomUUID().replace(/-/g, "").slice(0, 12).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: "UFAKEBOT", is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

export interface BlockActionsOptions {
  teamId: string;
  user: string;
  channel: string;
  /** The message the clicked element is on. */
  messageTs: string;
  /** Who posted that message (the bot, for cairn's answers). */
  messageUser: string;
  actionId: string;
  value: string;
  /** When the click happened (Slack's ts format); default now. */
  actionTs?: string;
}

/** A `block_actions` interaction payload, as Slack sends one when someone clicks an element of a message. */
export function blockActions(o: BlockActionsOptions): Record<string, unknown> {
  return {
    type: "block_actions",
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: o.teamId },
    api_app_id: "AFAKEAPP",
    token: "verification-token-unused",
    container: { type: "message", message_ts: o.messageTs, channel_id: o.channel, is_ephemeral: false },
    trigger_id: `trig-${randomUUID().slice(0, 8)}`,
    team: { id: o.teamId, domain: "fake" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: o.channel, name: o.channel.startsWith("D") ? "directmessage" : "general" },
    message: { type: "message", user: o.messageUser, ts: o.messageTs, text: "…" },
    state: { values: {} },
    response_url: "https://hooks.slack.invalid/actions/unused",
    actions: [{ type: "feedback_buttons", action_id: o.actionId, block_id: "fb", value: o.value, action_ts: o.actionTs ?? (Date.now() / 1000).toFixed(6) }],
  };
}

/**
 * A `message_action` interaction payload, as Slack sends one when `user` picks a message shortcut
 * (`callbackId`) on a message: the message as the channel shows it, its thread_ts when it is a reply.
 */
export function messageShortcut(o: { teamId: string; user: string; channel: string; callbackId: string; message: { ts: string; user?: string; text?: string; thread_ts?: string } }): Record<string, unknown> {
  return {
    type: "message_action",
    token: "verification-token-unused",
    action_ts: (Date.now() / 1000).toFixed(6),
    team: { id: o.teamId, domain: "fake" },
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: o.teamId },
    channel: { id: o.channel, name: o.channel.startsWith("D") ? "directmessage" : "general" },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: o.callbackId,
    trigger_id: `trig-${randomUUID().slice(0, 8)}`,
    response_url: "https://hooks.slack.invalid/app/unused",
    message_ts: o.message.ts,
    message: { type: "message", text: "…", ...o.message },
  };
}

/**
 * POSTs a signed interaction to a Bolt HTTP receiver, as Slack does: form-encoded `payload=<json>`
 * (a string `payload` is sent as is, to send malformed ones), signed like events.
 */
export function postInteraction(url: string, payload: unknown, opts: SignedPostOptions = {}): Promise<{ status: number; body: string }> {
  return postSigned(url, { payload: typeof payload === "string" ? payload : JSON.stringify(payload) }, { ...opts, contentType: "application/x-www-form-urlencoded" });
}

/** The v0 signature Slack puts in `X-Slack-Signature`. */
export function slackSignature(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

/**
 * POSTs a signed request to a Bolt HTTP receiver, as Slack would. `body` is sent as JSON (Events
 * API) or, given a record of strings and the form content type, form-encoded (slash commands).
 * A fresh connection per request (no keep-alive) so stopping the receiver never waits on it.
 */
export function postSigned(url: string, body: unknown, opts: SignedPostOptions = {}): Promise<{ status: number; body: string }> {
  const contentType = opts.contentType ?? "application/json";
  const fields = body !== null && typeof body === "object" ? Object.entries(body) : [];
  const raw =
    contentType === "application/json"
      ? JSON.stringify(body)
      : new URLSearchParams(fields.map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)])).toString();
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": contentType,
    "content-length": String(Buffer.byteLength(raw)),
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": opts.signature ?? slackSignature(opts.secret ?? SIGNING_SECRET, timestamp, raw),
  };
  if (opts.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(opts.retryNum);
    headers["x-slack-retry-reason"] = opts.retryReason ?? "http_timeout";
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(raw);
  });
}

export { waitUntil } from "./http.ts";

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A real pino logger writing into memory, so tests can wait for what the adapter logged. */
export function captureLogger(level = "debug"): { log: Logger; lines: LogLine[]; find(msg: string, pred?: (l: LogLine) => boolean): LogLine[] } {
  const lines: LogLine[] = [];
  const LineSchema = z.looseObject({ level: z.number(), msg: z.string().default("") });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString("utf8").split("\n")) {
        if (!text.trim()) continue;
        const parsed = LineSchema.safeParse(JSON.parse(text));
        if (parsed.success) lines.push(parsed.data as LogLine);
      }
      done();
    },
  });
  const log = pino({ level }, sink);
  return { log, lines, find: (msg, pred) => lines.filter((l) => l.msg === msg && (!pred || pred(l))) };
}

// ---------------------------------------------------------------------------------------------

const METHOD_PATH = /^\/api\/([a-zA-Z.]+)$/;

/** An app token the fake accepts that names its connections `label` (SocketInfo.label): one per process. */
export function appTokenFor(label: string): string {
  return `${APP_TOKEN}-${label}`;
}

/** The label of an accepted app token, or null for any other token. */
function appTokenLabel(token: string | null): string | null {
  if (token === APP_TOKEN) return "";
  return token?.startsWith(`${APP_TOKEN}-`) ? token.slice(APP_TOKEN.length + 1) : null;
}

/**
 * Chooses the connections each envelope goes to: round-robin, or random from a seed (the same
 * seed, the same choices), over the connections open at the time. `copies` 2 is a duplicate
 * delivery over a second, different connection (when there is one).
 */
export function socketSpread(mode: "round-robin" | { seed: number }): (open: readonly number[], copies?: number) => number[] {
  let turn = 0;
  const random = mode === "round-robin" ? null : mulberry32(mode.seed);
  return (open, copies = 1) => {
    if (open.length === 0) return [];
    const first = random ? Math.floor(random() * open.length) : turn++ % open.length;
    const chosen = [open[first]!];
    for (let i = 1; i < Math.min(copies, open.length); i++) {
      // Another connection than those chosen: the next ones after the first, or a random one of the rest.
      const offset = random ? 1 + Math.floor(random() * (open.length - 1)) : i;
      let next = open[(first + offset) % open.length]!;
      while (chosen.includes(next)) next = open[(open.indexOf(next) + 1) % open.length]!;
      chosen.push(next);
    }
    return chosen;
  };
}

/** A small seeded generator (mulberry32): reproducible choices without a dependency. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startFakeSlack(opts: { bot?: Partial<FakeBot> } = {}): Promise<FakeSlack> {
  const bot: FakeBot = { userId: "UFAKEBOT", botId: "BFAKEBOT", name: "cairn", teamId: "TFAKE", ...opts.bot };
  let scopes: readonly string[] | null = Object.keys(BOT_SCOPES);
  const calls: SlackCall[] = [];
  const acks: SocketAck[] = [];
  const responses: ResponseUrlPost[] = [];
  const rateLimits = new Map<string, { times: number; retryAfter: number }>();
  const failures = new Map<string, { times: number; error: string; when?: (args: Record<string, unknown>) => boolean }>();
  const users = new Map<string, FakeUser>();
  const store = new Map<string, StoredMessage[]>();
  const reactions = new Map<string, Set<string>>();
  const dms = new Map<string, string>();
  const dmChannel = (user: string): string => {
    let id = dms.get(user);
    if (!id) {
      id = `D${user.replace(/^[UW]/, "")}${dms.size + 1}`;
      dms.set(user, id);
    }
    return id;
  };
  const sockets = new Set<WebSocket>();
  /** Open connections by id, and every connection's record. */
  const byId = new Map<number, WebSocket>();
  const socketInfos: SocketInfo[] = [];
  /** The label of each ticket apps.connections.open handed out. */
  const tickets = new Map<string, string>();
  const deliveries: EnvelopeDelivery[] = [];
  const botPosts: BotPost[] = [];
  const postListeners = new Set<(post: BotPost) => void>();
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;
  let tsCounter = 0;
  let envelopeCounter = 0;
  const published: FakeView[] = [];
  const opened: FakeView[] = [];
  /** Home view ids, one per user (Slack keeps a user's Home view id), and modal ids. */
  const homeIds = new Map<string, string>();
  let viewCounter = 0;
  /** trigger_ids handed out in payloads: whose, and whether views.open used it already. */
  const triggers = new Map<string, { user: string; used: boolean }>();
  const newTrigger = (user: string): string => {
    const id = `${Date.now()}.${++viewCounter}.${randomUUID().replace(/-/g, "").slice(0, 16)}`;
    triggers.set(id, { user, used: false });
    return id;
  };
  const channelInfo = new Map<string, { private: boolean; archived: boolean; mpim?: boolean; members: Set<string> }>();
  let listPageMax = 100;
  const pageMax = new Map<string, number>();
  /** A page's size: what was asked (or `fallback`), within the fake's cap for the method. */
  const pageSize = (method: string, asked: string | undefined, fallback: number): number => Math.min(Number(asked ?? fallback) || fallback, pageMax.get(method) ?? Infinity);
  /** Slack's cursors are opaque; the fake's, like Slack's own, name the ts a page starts at. */
  const tsCursor = (ts: string): string => Buffer.from(`next_ts:${ts}`).toString("base64");
  const cursorTs = (cursor: string | undefined): string | null | "invalid" => {
    if (!cursor) return null;
    return /^next_ts:(\d+\.\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"))?.[1] ?? "invalid";
  };
  /** A thread's replies (its first message left out), oldest first. */
  const repliesOf = (channel: string, ts: string): StoredMessage[] => (store.get(channel) ?? []).filter((x) => x.thread_ts === ts && x.ts !== ts);

  // As Slack's: the time of posting, to the microsecond, unique and increasing (cairn reads a
  // message's age from it: crash recovery answers a lost message late only while it is recent).
  const nextTs = (): string => {
    tsCounter = Math.max(Date.now() * 1000, tsCounter + 100);
    return `${Math.floor(tsCounter / 1e6)}.${String(tsCounter % 1e6).padStart(6, "0")}`;
  };

  const addMessage = (m: StoredMessage): void => {
    const list = store.get(m.channel) ?? [];
    list.push(m);
    list.sort((a, b) => Number(a.ts) - Number(b.ts));
    store.set(m.channel, list);
  };

  const userOf = (id: string): FakeUser =>
    users.get(id) ?? { id, name: id.toLowerCase(), displayName: "", realName: `User ${id}`, isBot: false };

  const server = http.createServer((req, res) => {
    void route(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { ok: false, error: `fake_crashed: ${String(err)}` });
      else res.destroy();
    });
  });
  const wss = new WebSocketServer({ noServer: true });

  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path !== "/socket") {
      socket.destroy();
      return;
    }
    const ticket = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("ticket") ?? "";
    wss.handleUpgrade(req, socket, head, (ws) => {
      const info: SocketInfo = { id: socketInfos.length + 1, label: tickets.get(ticket) ?? "", openedAt: Date.now(), closedAt: null };
      socketInfos.push(info);
      sockets.add(ws);
      byId.set(info.id, ws);
      ws.on("close", () => {
        sockets.delete(ws);
        byId.delete(info.id);
        info.closedAt = Date.now();
      });
      ws.on("message", (data: Buffer) => {
        const parsed = z.looseObject({ envelope_id: z.string(), payload: z.unknown() }).safeParse(JSON.parse(data.toString("utf8")));
        if (parsed.success) acks.push({ envelope_id: parsed.data.envelope_id, payload: parsed.data.payload, at: Date.now(), socket: info.id });
      });
      // The SocketModeClient treats a silent server as a dead connection after 30 s; ping like Slack does.
      const ping = setInterval(() => ws.ping(), 5_000);
      timers.add(ping);
      ws.on("close", () => {
        clearInterval(ping);
        timers.delete(ping);
      });
      ws.send(JSON.stringify({ type: "hello", num_connections: sockets.size, debug_info: { host: "fake-slack", approximate_connection_time: 3600 }, connection_info: { app_id: "AFAKEAPP" } }));
    });
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(req);
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (req.method === "POST" && url.pathname.startsWith("/respond/")) {
      const body = z.record(z.string(), z.unknown()).parse(JSON.parse(raw));
      responses.push({ id: url.pathname.slice("/respond/".length), body, at: Date.now() });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const m = METHOD_PATH.exec(url.pathname);
    if (req.method !== "POST" || !m) {
      send(res, 404, { ok: false, error: "unknown_method" });
      return;
    }
    const method = m[1]!;
    const args = parseArgs(contentType, raw);
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : typeof args.token === "string" ? args.token : null;
    const call: SlackCall = { seq: ++seq, method, args, token, contentType, at: Date.now(), status: 200, ok: true };
    calls.push(call);

    const limit = rateLimits.get(method);
    if (limit && limit.times > 0) {
      limit.times -= 1;
      call.status = 429;
      call.ok = false;
      send(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(limit.retryAfter) });
      return;
    }
    const accepted = method === "apps.connections.open" ? appTokenLabel(token) !== null : token === BOT_TOKEN;
    if (!accepted) {
      call.ok = false;
      send(res, 200, { ok: false, error: token ? "invalid_auth" : "not_authed" });
      return;
    }
    const granted: Record<string, string> = token === BOT_TOKEN && scopes ? { "x-oauth-scopes": scopes.join(",") } : {};
    const failure = failures.get(method);
    if (failure && failure.times > 0 && (!failure.when || failure.when(args))) {
      failure.times -= 1;
      call.ok = false;
      send(res, 200, { ok: false, error: failure.error }, granted);
      return;
    }
    const result = answer(method, args, token, call);
    call.ok = result.ok === true;
    send(res, 200, result, granted);
  }

  /** As Slack does: a message's metadata is returned only to a read that asks for it. */
  function withMetadata(m: Record<string, unknown>, a: Record<string, unknown>): Record<string, unknown> {
    const asked = a.include_all_metadata === true || a.include_all_metadata === "true" || a.include_all_metadata === "1";
    if (asked) return m;
    const { metadata: _dropped, ...rest } = m;
    return rest;
  }

  function answer(method: string, a: Record<string, unknown>, token: string | null, call: SlackCall): Record<string, unknown> {
    const str = (k: string): string | undefined => (typeof a[k] === "string" ? (a[k] as string) : a[k] === undefined ? undefined : String(a[k]));
    switch (method) {
      case "auth.test":
        return { ok: true, url: "https://fake.slack.com/", team: "Fake Team", user: bot.name, team_id: bot.teamId, user_id: bot.userId, bot_id: bot.botId, is_enterprise_install: false };
      case "chat.postMessage": {
        const channel = str("channel");
        const text = str("text");
        if (!channel) return { ok: false, error: "channel_not_found" };
        if (!text && !a.blocks) return { ok: false, error: "no_text" };
        const ts = nextTs();
        const threadTs = str("thread_ts");
        const blocks = blocksOf(a);
        if (blocks === "invalid") return { ok: false, error: "invalid_blocks" };
        const metadata = typeof a.metadata === "string" ? (JSON.parse(a.metadata) as unknown) : a.metadata;
        const msg: StoredMessage = { channel, ts, text: text ?? "", user: bot.userId, bot_id: bot.botId, ...(threadTs ? { thread_ts: threadTs } : {}), ...(blocks?.length ? { blocks } : {}), ...(metadata ? { metadata } : {}) };
        addMessage(msg);
        // The stored message itself, so its later edits show in `text`.
        const post: BotPost = {
          seq: call.seq,
          channel,
          ts,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          get text() {
            return msg.text;
          },
          at: call.at,
          deleted: false,
        };
        botPosts.push(post);
        for (const listener of postListeners) listener(post);
        return { ok: true, channel, ts, message: { type: "message", ...msg } };
      }
      case "chat.update": {
        const channel = str("channel");
        const ts = str("ts");
        const msg = store.get(channel ?? "")?.find((x) => x.ts === ts);
        if (!msg) return { ok: false, error: "message_not_found" };
        if (msg.user !== bot.userId) return { ok: false, error: "cant_update_message" };
        const blocks = blocksOf(a);
        if (blocks === "invalid") return { ok: false, error: "invalid_blocks" };
        msg.text = str("text") ?? msg.text;
        // As Slack does: without `blocks` the message keeps its blocks; an empty list removes them.
        if (blocks?.length) msg.blocks = blocks;
        else if (blocks) delete msg.blocks;
        return { ok: true, channel, ts, text: msg.text };
      }
      case "chat.delete": {
        const list = store.get(str("channel") ?? "");
        const i = list?.findIndex((x) => x.ts === str("ts")) ?? -1;
        if (!list || i < 0) return { ok: false, error: "message_not_found" };
        if (list[i]!.user !== bot.userId) return { ok: false, error: "cant_delete_message" };
        list.splice(i, 1);
        for (const p of botPosts) if (p.channel === str("channel") && p.ts === str("ts")) p.deleted = true;
        return { ok: true, channel: str("channel"), ts: str("ts") };
      }
      case "chat.postEphemeral":
        if (!str("channel") || !str("user")) return { ok: false, error: "channel_not_found" };
        return { ok: true, message_ts: nextTs() };
      case "reactions.add":
      case "reactions.remove": {
        const key = `${str("channel")}:${str("timestamp")}`;
        const name = str("name") ?? "";
        const set = reactions.get(key) ?? new Set<string>();
        reactions.set(key, set);
        if (method === "reactions.add") {
          if (set.has(name)) return { ok: false, error: "already_reacted" };
          set.add(name);
        } else {
          if (!set.delete(name)) return { ok: false, error: "no_reaction" };
        }
        return { ok: true };
      }
      case "conversations.replies": {
        // The thread's first message heads every page, as Slack's does; then its replies, oldest first.
        const channel = str("channel") ?? "";
        const ts = str("ts") ?? "";
        const parent = (store.get(channel) ?? []).find((x) => x.ts === ts);
        if (!parent) return { ok: false, error: "thread_not_found" };
        const replies = repliesOf(channel, ts);
        const latest = str("latest");
        const inclusive = str("inclusive") === "true" || str("inclusive") === "1";
        const from = cursorTs(str("cursor"));
        if (from === "invalid") return { ok: false, error: "invalid_cursor" };
        const inRange = replies.filter((x) => (!latest || Number(x.ts) < Number(latest) || (inclusive && x.ts === latest)) && (from === null || Number(x.ts) >= Number(from)));
        const size = pageSize(method, str("limit"), 1000);
        const page = inRange.slice(0, Math.max(1, size - 1));
        const rest = inRange.slice(page.length);
        const head = { type: "message", ...parent, thread_ts: ts, reply_count: replies.length, ...(replies.length ? { latest_reply: replies.at(-1)!.ts } : {}) };
        return {
          ok: true,
          messages: [withMetadata(head, a), ...page.map((x) => withMetadata({ type: "message", ...x }, a))],
          has_more: rest.length > 0,
          response_metadata: { next_cursor: rest.length ? tsCursor(rest[0]!.ts) : "" },
        };
      }
      case "conversations.history": {
        // The channel's top level (thread replies are not in it, unless also sent to the channel),
        // newest first, after `oldest`; a thread's first message says how many replies it has.
        const channel = str("channel") ?? "";
        const oldest = Number(str("oldest") ?? "0");
        const inclusive = str("inclusive") === "true" || str("inclusive") === "1";
        const from = cursorTs(str("cursor"));
        if (from === "invalid") return { ok: false, error: "invalid_cursor" };
        const top = (store.get(channel) ?? [])
          .filter((x) => !x.thread_ts || x.thread_ts === x.ts || x.subtype === "thread_broadcast")
          .filter((x) => Number(x.ts) > oldest || (inclusive && Number(x.ts) === oldest))
          .filter((x) => from === null || Number(x.ts) <= Number(from))
          .reverse();
        const page = top.slice(0, pageSize(method, str("limit"), 100));
        const rest = top.slice(page.length);
        const shown = page.map((x) => {
          const replies = x.subtype === "thread_broadcast" ? [] : repliesOf(channel, x.ts);
          return withMetadata({ type: "message", ...x, ...(replies.length ? { thread_ts: x.ts, reply_count: replies.length, latest_reply: replies.at(-1)!.ts } : {}) }, a);
        });
        return { ok: true, messages: shown, has_more: rest.length > 0, response_metadata: { next_cursor: rest.length ? tsCursor(rest[0]!.ts) : "" } };
      }
      case "conversations.members": {
        const channel = str("channel") ?? "";
        const info = channelInfo.get(channel);
        if (!info) return { ok: false, error: "channel_not_found" };
        const all = [...info.members].sort();
        const cursor = str("cursor");
        const start = cursor ? Number(/^offset:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"))?.[1] ?? NaN) : 0;
        if (!Number.isInteger(start)) return { ok: false, error: "invalid_cursor" };
        const size = pageSize(method, str("limit"), 100);
        const next = start + size < all.length ? Buffer.from(`offset:${start + size}`).toString("base64") : "";
        return { ok: true, members: all.slice(start, start + size), response_metadata: { next_cursor: next } };
      }
      case "conversations.info": {
        const channel = str("channel") ?? "";
        if (channel.startsWith("D")) return { ok: true, channel: { id: channel, is_im: true, is_channel: false, is_group: false, is_mpim: false, is_private: true } };
        const info = channelInfo.get(channel);
        if (!info && !store.has(channel)) return { ok: false, error: "channel_not_found" };
        const mpim = info?.mpim === true;
        const priv = info?.private === true;
        return {
          ok: true,
          channel: { id: channel, name: channel.toLowerCase(), is_im: false, is_mpim: mpim, is_channel: !mpim && !priv, is_group: !mpim && priv, is_private: mpim || priv, is_archived: info?.archived === true },
        };
      }
      case "conversations.open": {
        // One person: their DM with the bot (group DMs are not modelled).
        const users = (str("users") ?? "").split(",").filter(Boolean);
        if (users.length !== 1 || !/^[UW]/.test(users[0]!)) return { ok: false, error: users.length ? "user_not_found" : "users_list_not_supplied" };
        return { ok: true, channel: { id: dmChannel(users[0]!) } };
      }
      case "users.info": {
        const id = str("user") ?? "";
        if (!/^[UW]/.test(id)) return { ok: false, error: "user_not_found" };
        const u = userOf(id);
        return {
          ok: true,
          user: { id: u.id, name: u.name, real_name: u.realName, is_bot: u.isBot, deleted: false, profile: { display_name: u.displayName, real_name: u.realName } },
        };
      }
      case "apps.connections.open": {
        const ticket = randomUUID();
        tickets.set(ticket, appTokenLabel(token) ?? "");
        return { ok: true, url: `ws://127.0.0.1:${port}/socket?ticket=${ticket}` };
      }
      case "assistant.threads.setStatus":
        return { ok: true };
      case "users.conversations": {
        // The channels `user` is in, of the asked types; private ones only where the bot is too.
        const user = str("user") ?? bot.userId;
        const types = (str("types") ?? "public_channel").split(",").map((t) => t.trim());
        const excludeArchived = str("exclude_archived") === "true" || str("exclude_archived") === "1";
        const all = [...channelInfo.entries()]
          .filter(([, c]) => c.members.has(user) && c.mpim !== true && types.includes(c.private ? "private_channel" : "public_channel"))
          .filter(([, c]) => !(excludeArchived && c.archived) && (!c.private || c.members.has(bot.userId)))
          .map(([id, c]) => ({ id, name: id.toLowerCase(), is_channel: !c.private, is_group: c.private, is_private: c.private, is_archived: c.archived }))
          .sort((x, y) => x.id.localeCompare(y.id));
        const cursor = str("cursor");
        const start = cursor ? Number(/^offset:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"))?.[1] ?? NaN) : 0;
        if (!Number.isInteger(start)) return { ok: false, error: "invalid_cursor" };
        const limit = Math.min(Number(str("limit") ?? "100") || 100, listPageMax);
        const page = all.slice(start, start + limit);
        const next = start + limit < all.length ? Buffer.from(`offset:${start + limit}`).toString("base64") : "";
        return { ok: true, channels: page, response_metadata: { next_cursor: next } };
      }
      case "views.publish": {
        const user = str("user_id");
        const view = viewArg(a);
        if (!user || !view) return { ok: false, error: "invalid_arguments" };
        const problem = viewProblem(view, "home");
        if (problem) return { ok: false, error: problem.error, response_metadata: { messages: [problem.message] } };
        let id = homeIds.get(user);
        if (!id) homeIds.set(user, (id = `VH${String(++viewCounter).padStart(8, "0")}`));
        const stored = answeredView(view, id);
        published.push({ seq: call.seq, user, view: stored, at: call.at });
        return { ok: true, view: stored };
      }
      case "views.open": {
        const trigger = str("trigger_id");
        const view = viewArg(a);
        if (!trigger || !view) return { ok: false, error: "invalid_arguments" };
        const t = triggers.get(trigger);
        if (!t) return { ok: false, error: "invalid_trigger_id" };
        if (t.used) return { ok: false, error: "exchanged_trigger_id" };
        const problem = viewProblem(view, "modal");
        if (problem) return { ok: false, error: problem.error, response_metadata: { messages: [problem.message] } };
        t.used = true;
        const stored = answeredView(view, `VM${String(++viewCounter).padStart(8, "0")}`);
        opened.push({ seq: call.seq, user: t.user, view: stored, at: call.at });
        return { ok: true, view: stored };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  const port = await listenLocal(server);
  const origin = `http://127.0.0.1:${port}`;

  const waitFor = <T>(what: string, pred: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> => waitUntil(what, pred, timeoutMs);

  return {
    apiUrl: `${origin}/api/`,
    origin,
    bot,
    calls,
    acks,
    responses,
    callsTo: (method) => calls.filter((c) => c.method === method && c.ok),
    rateLimit: (method, times, retryAfter) => {
      rateLimits.set(method, { times, retryAfter });
    },
    setScopes: (list) => {
      scopes = list;
    },
    failNext: (method, error, times = 1, when) => {
      failures.set(method, { times, error, ...(when ? { when } : {}) });
    },
    addUser: (u) => {
      users.set(u.id, { ...userOf(u.id), ...u });
    },
    seedMessage: (m) => {
      const ts = m.ts ?? nextTs();
      addMessage({ ...m, ts });
      return ts;
    },
    messages: (channel) => [...(store.get(channel) ?? [])],
    dmChannel,
    nextTs,
    reactionsOn: (channel, ts) => [...(reactions.get(`${channel}:${ts}`) ?? [])],
    responseUrl: () => `${origin}/respond/${randomUUID()}`,
    socketCount: () => sockets.size,
    sockets: () => socketInfos.map((s) => ({ ...s })),
    deliveries,
    botPosts: () => [...botPosts],
    onBotPost: (listener) => {
      postListeners.add(listener);
      return () => postListeners.delete(listener);
    },
    pushEnvelope: (type, payload, o = {}) => {
      const envelopeId = `env-${++envelopeCounter}-${randomUUID().slice(0, 8)}`;
      const sendOver = (ids: readonly number[], attempt: number, reason: string): void => {
        const envelope = JSON.stringify({
          envelope_id: envelopeId,
          type,
          accepts_response_payload: type !== "events_api",
          ...(type === "events_api" ? { retry_attempt: attempt, retry_reason: reason } : {}),
          payload,
        });
        for (const id of ids) {
          const ws = byId.get(id);
          if (!ws) continue;
          ws.send(envelope);
          deliveries.push({ envelopeId, socket: id, attempt, at: Date.now() });
        }
      };
      const first = o.to ?? [...byId.keys()];
      sendOver(first, o.retryAttempt ?? 0, o.retryReason ?? "");
      const after = o.redeliverAfterMs;
      if (after !== undefined) {
        const tried = new Set(first);
        const retry = (attempt: number): void => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (acks.some((a) => a.envelope_id === envelopeId)) return;
            const open = [...byId.keys()];
            // Another connection than those tried, if one is open (Slack moves on from a dead one).
            const target = open.find((id) => !tried.has(id)) ?? open[0];
            if (target !== undefined) {
              tried.add(target);
              sendOver([target], attempt, "timeout");
            }
            if (attempt < 3) retry(attempt + 1);
          }, after);
          timers.add(timer);
        };
        retry((o.retryAttempt ?? 0) + 1);
      }
      return envelopeId;
    },
    waitForAck: (envelopeId, timeoutMs = 10_000) => waitFor(`ack of ${envelopeId}`, () => acks.find((x) => x.envelope_id === envelopeId), timeoutMs),
    waitForSocket: async (timeoutMs = 10_000) => {
      await waitFor("a Socket Mode connection", () => sockets.size > 0, timeoutMs);
    },
    waitFor,
    homeViews: (user) => published.filter((v) => user === undefined || v.user === user),
    homeOf: (user) => published.filter((v) => v.user === user).at(-1),
    modals: (user) => opened.filter((v) => user === undefined || v.user === user),
    joinChannel: (user, channel, o = {}) => {
      const c = channelInfo.get(channel) ?? { private: o.private === true, archived: o.archived === true, members: new Set<string>() };
      if (o.private !== undefined) c.private = o.private;
      if (o.archived !== undefined) c.archived = o.archived;
      c.members.add(user);
      channelInfo.set(channel, c);
    },
    leaveChannel: (user, channel) => {
      channelInfo.get(channel)?.members.delete(user);
    },
    setListPageMax: (max) => {
      listPageMax = max;
    },
    setPageMax: (method, max) => {
      if (max === null) pageMax.delete(method);
      else pageMax.set(method, max);
    },
    seedHistory: (channel, messages) => {
      const list = store.get(channel) ?? [];
      for (const m of messages) list.push({ ...m, channel });
      list.sort((x, y) => Number(x.ts) - Number(y.ts));
      store.set(channel, list);
      return messages.map((m) => m.ts);
    },
    groupDm: (channel, members) => {
      channelInfo.set(channel, { private: true, archived: false, mpim: true, members: new Set([...members, bot.userId]) });
    },
    messageChanged: (channel, ts, text, o = {}) => {
      const msg = store.get(channel)?.find((x) => x.ts === ts);
      if (!msg) throw new Error(`no message ${ts} in ${channel}`);
      const previous = { type: "message", ...msg };
      msg.text = text;
      const at = nextTs();
      return {
        type: "message",
        subtype: "message_changed",
        hidden: true,
        channel,
        channel_type: o.channelType ?? "channel",
        ts: at,
        event_ts: at,
        message: { type: "message", ...msg, edited: { user: msg.user, ts: at } },
        previous_message: previous,
      };
    },
    messageDeleted: (channel, ts, o = {}) => {
      const list = store.get(channel) ?? [];
      const i = list.findIndex((x) => x.ts === ts);
      if (i < 0) throw new Error(`no message ${ts} in ${channel}`);
      const [gone] = list.splice(i, 1);
      const at = nextTs();
      return { type: "message", subtype: "message_deleted", hidden: true, channel, channel_type: o.channelType ?? "channel", ts: at, event_ts: at, deleted_ts: ts, previous_message: { type: "message", ...gone } };
    },
    memberJoined: (user, channel, o = {}) => {
      const c = channelInfo.get(channel) ?? { private: false, archived: false, members: new Set<string>() };
      c.members.add(user);
      channelInfo.set(channel, c);
      return { type: "member_joined_channel", user, channel, channel_type: c.private ? "G" : "C", team: bot.teamId, event_ts: nextTs(), ...(o.inviter ? { inviter: o.inviter } : {}) };
    },
    memberLeft: (user, channel) => {
      const c = channelInfo.get(channel);
      c?.members.delete(user);
      return { type: "member_left_channel", user, channel, channel_type: c?.private ? "G" : "C", team: bot.teamId, event_ts: nextTs() };
    },
    appHomeOpened: (user, o = {}) => {
      const home = published.filter((v) => v.user === user).at(-1);
      const ts = nextTs();
      return { type: "app_home_opened", user, channel: o.channel ?? dmChannel(user), tab: o.tab ?? "home", event_ts: ts, ...(home ? { view: home.view } : {}) };
    },
    homeAction: ({ teamId, user, pick, from }) => {
      const source = from ?? published.filter((v) => v.user === user).at(-1);
      if (!source) throw new Error(`no Home view published for ${user}`);
      const button = viewButtons(source.view).find((b) => (pick.value === undefined || b.value === pick.value) && (pick.label === undefined || b.label === pick.label) && (pick.actionId === undefined || b.actionId === pick.actionId));
      if (!button) throw new Error(`no button ${JSON.stringify(pick)} in the Home view of ${source.user}`);
      return {
        type: "block_actions",
        user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: teamId },
        api_app_id: "AFAKEAPP",
        token: "verification-token-unused",
        container: { type: "view", view_id: source.view.id },
        trigger_id: newTrigger(user),
        team: { id: teamId, domain: "fake" },
        enterprise: null,
        is_enterprise_install: false,
        view: source.view,
        actions: [
          {
            type: "button",
            action_id: button.actionId,
            block_id: button.blockId,
            text: { type: "plain_text", text: button.label, emoji: true },
            value: button.value,
            ...(button.style ? { style: button.style } : {}),
            action_ts: (Date.now() / 1000).toFixed(6),
          },
        ],
      };
    },
    viewSubmission: ({ teamId, user, modal, values = {} }) => {
      const state: Record<string, Record<string, { type: string; value: string | null }>> = {};
      for (const block of modal.view.blocks) {
        if (block.type !== "input" || !block.block_id || !block.element?.action_id) continue;
        const value = values[block.block_id] ?? block.element.initial_value ?? null;
        state[block.block_id] = { [block.element.action_id]: { type: block.element.type, value } };
      }
      return {
        type: "view_submission",
        team: { id: teamId, domain: "fake" },
        user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: teamId },
        api_app_id: "AFAKEAPP",
        token: "verification-token-unused",
        trigger_id: newTrigger(user),
        view: { ...modal.view, state: { values: state } },
        response_urls: [],
        is_enterprise_install: false,
        enterprise: null,
      };
    },
    reset: () => {
      published.length = 0;
      opened.length = 0;
      triggers.clear();
      calls.length = 0;
      acks.length = 0;
      deliveries.length = 0;
      botPosts.length = 0;
      responses.length = 0;
      rateLimits.clear();
      failures.clear();
      pageMax.clear();
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** The WebClient sends form fields (nested values JSON-encoded) or, for some methods, JSON. */
function parseArgs(contentType: string, raw: string): Record<string, unknown> {
  if (!raw) return {};
  if (contentType === "application/json") {
    const parsed = z.record(z.string(), z.unknown()).safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : {};
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

/**
 * The `blocks` argument (a JSON string in form bodies), checked as Slack checks it: at most 50
 * objects with a `type`; section text of 1 to 3,000 characters; a header's plain_text of 1 to 150;
 * a context of 1 to 10 elements, each text within 3,000. Undefined when absent.
 */
function blocksOf(a: Record<string, unknown>): unknown[] | undefined | "invalid" {
  if (a.blocks === undefined) return undefined;
  let raw: unknown = a.blocks;
  try {
    if (typeof raw === "string") raw = JSON.parse(raw);
  } catch {
    return "invalid";
  }
  const Block = z.looseObject({ type: z.string().min(1), text: z.looseObject({ type: z.string(), text: z.string() }).optional() });
  const parsed = z.array(Block).max(50).safeParse(raw);
  if (!parsed.success) return "invalid";
  const Context = z.object({ elements: z.array(z.looseObject({ type: z.string(), text: z.string().min(1).max(3000).optional() })).min(1).max(10) });
  const bad = (b: z.infer<typeof Block>): boolean =>
    (b.type === "section" && (b.text?.text.length ?? 0) > 3000) ||
    (b.type === "section" && b.text !== undefined && b.text.text.length === 0) ||
    (b.type === "header" && (b.text?.type !== "plain_text" || b.text.text.length === 0 || b.text.text.length > 150)) ||
    (b.type === "context" && !Context.safeParse(b).success);
  if (parsed.data.some(bad)) return "invalid";
  return parsed.data;
}

function send(res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers }).end(JSON.stringify(body));
}

/** The `view` argument (a JSON string in form bodies) as an object; null when it is not one. */
function viewArg(a: Record<string, unknown>): Record<string, unknown> | null {
  let raw: unknown = a.view;
  try {
    if (typeof raw === "string") raw = JSON.parse(raw);
  } catch {
    return null;
  }
  return raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
}

/** As Slack answers a view: what was sent, with its id, team, hash and an empty state. */
function answeredView(view: Record<string, unknown>, id: string): FakeViewBody {
  // Checked by viewProblem first: a type and a list of blocks.
  return { ...view, type: String(view.type), blocks: view.blocks as FakeBlock[], id, team_id: "TFAKE", app_id: "AFAKEAPP", hash: `${Date.now()}.${randomUUID().slice(0, 8)}`, state: { values: {} } };
}

const Plain = (max: number) => z.object({ type: z.literal("plain_text"), text: z.string().min(1).max(max), emoji: z.boolean().optional() });
const TextObject = (max: number) => z.object({ type: z.enum(["plain_text", "mrkdwn"]), text: z.string().min(1).max(max), emoji: z.boolean().optional(), verbatim: z.boolean().optional() });
const ButtonSchema = z.object({
  type: z.literal("button"),
  action_id: z.string().min(1).max(255),
  text: Plain(75),
  value: z.string().max(2000).optional(),
  url: z.string().max(3000).optional(),
  style: z.enum(["primary", "danger"]).optional(),
  confirm: z
    .object({ title: Plain(100), text: TextObject(300), confirm: Plain(30), deny: Plain(30), style: z.enum(["primary", "danger"]).optional() })
    .optional(),
  accessibility_label: z.string().max(75).optional(),
});
const BlockId = z.string().min(1).max(255).optional();
const ViewBlockSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("section"), block_id: BlockId, text: TextObject(3000), accessory: ButtonSchema.optional() }),
  z.object({ type: z.literal("header"), block_id: BlockId, text: Plain(150) }),
  z.object({ type: z.literal("divider"), block_id: BlockId }),
  z.object({ type: z.literal("actions"), block_id: BlockId, elements: z.array(ButtonSchema).min(1).max(25) }),
  z.object({ type: z.literal("context"), block_id: BlockId, elements: z.array(TextObject(3000)).min(1).max(10) }),
  z.object({
    type: z.literal("input"),
    block_id: BlockId,
    label: Plain(2000),
    optional: z.boolean().optional(),
    element: z
      .object({ type: z.literal("plain_text_input"), action_id: z.string().min(1).max(255), multiline: z.boolean().optional(), max_length: z.number().int().min(1).max(3000).optional(), initial_value: z.string().optional() })
      .refine((e) => e.initial_value === undefined || e.max_length === undefined || e.initial_value.length <= e.max_length, "initial_value longer than max_length"),
  }),
]);

/**
 * A view checked as Slack checks it (the kinds of blocks cairn sends; any other is refused): its
 * type, at most 100 blocks each within its limits, unique block_ids and action_ids,
 * private_metadata of at most 3,000 characters; a modal's title, buttons and, with an input, a submit.
 */
export function viewProblem(view: Record<string, unknown>, kind: "home" | "modal"): { error: string; message: string } | null {
  if (view.type !== kind) return { error: "invalid_arguments", message: `[ERROR] must be a ${kind} view [json-pointer:/view/type]` };
  if (view.private_metadata !== undefined && (typeof view.private_metadata !== "string" || view.private_metadata.length > 3000)) {
    return { error: "invalid_arguments", message: "[ERROR] failed to match all allowed schemas [json-pointer:/view/private_metadata]" };
  }
  if (view.callback_id !== undefined && (typeof view.callback_id !== "string" || view.callback_id.length > 255)) return { error: "invalid_arguments", message: "[ERROR] callback_id too long" };
  const blocks = z.array(z.unknown()).max(100).safeParse(view.blocks);
  if (!blocks.success) return { error: "invalid_blocks", message: "[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]" };
  const blockIds = new Set<string>();
  const actionIds = new Set<string>();
  let inputs = 0;
  for (const [i, raw] of blocks.data.entries()) {
    const b = ViewBlockSchema.safeParse(raw);
    if (!b.success) return { error: "invalid_blocks", message: `[ERROR] ${b.error.issues[0]?.message ?? "invalid"} [json-pointer:/view/blocks/${i}]` };
    const block = b.data;
    if (block.block_id !== undefined) {
      if (blockIds.has(block.block_id)) return { error: "invalid_blocks", message: `[ERROR] duplicate block_id ${block.block_id} [json-pointer:/view/blocks/${i}]` };
      blockIds.add(block.block_id);
    }
    const ids = block.type === "section" ? (block.accessory ? [block.accessory.action_id] : []) : block.type === "actions" ? block.elements.map((e) => e.action_id) : block.type === "input" ? [block.element.action_id] : [];
    for (const id of ids) {
      if (actionIds.has(id)) return { error: "invalid_blocks", message: `[ERROR] duplicate action_id ${id} [json-pointer:/view/blocks/${i}]` };
      actionIds.add(id);
    }
    if (block.type === "input") inputs++;
  }
  if (kind === "modal") {
    const Modal = z.object({ title: Plain(24), submit: Plain(24).optional(), close: Plain(24).optional() });
    const m = Modal.safeParse(view);
    if (!m.success) return { error: "invalid_arguments", message: `[ERROR] ${m.error.issues[0]?.message ?? "invalid"} [json-pointer:/view/${String(m.error.issues[0]?.path[0] ?? "")}]` };
    if (inputs > 0 && !m.data.submit) return { error: "invalid_arguments", message: "[ERROR] submit is required when an input block is present [json-pointer:/view/submit]" };
  }
  return null;
}
