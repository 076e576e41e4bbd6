/**
 * The one contract between the core and a platform (Slack, Discord, the console, the next one).
 *
 * An adapter knows its platform and nothing else: it turns events into `Inbound` and
 * `FeedbackEvent`, renders Markdown into the platform's text, and moves already-rendered parts
 * onto the platform (send, edit, delete). The turn policy (who is answered, what a refusal or an
 * apology looks like, drafts, chunking, deliveries, thread following, dedupe) lives once, in the
 * core's delivery path (`delivery.ts`), and every platform gets it by implementing this file.
 */
import type { CommandCall, CommandName, CommandReply } from "./commands.ts";
import type { Logger } from "./log.ts";
import type { FeedbackEvent, FeedbackResult, Inbound, Platform } from "./types.ts";
import type { TeamView, ViewButton, ViewRequest } from "./view-model.ts";
import type { ChannelEvent, HistoryPage } from "./channel-events.ts";
import type { InboundJournal, StoreOutcome } from "./journal.ts";

/** How the delivery path drives a reply surface: the platform's rendering and limits. */
export interface DraftOptions {
  /** Markdown to the platform's text. */
  render: (markdown: string) => string;
  /** Rendered text to parts within the platform's limits. */
  chunk: (rendered: string) => string[];
  /** Least time between two flushes, and how long a draft waits before it is first shown. */
  minUpdateMs: number;
  /** Shown in place of the answer when the platform refuses to take it (null: nothing). */
  apology: string | null;
  log: Logger;
}

/**
 * What the delivery path needs to know of a platform beyond its targets. Whether it edits, reacts
 * or has threads is not listed: a target says so itself (`edit`, `working`, a thread in its place).
 */
export interface Capabilities {
  /**
   * Command answers can be shown to the asker alone (Slack ephemeral messages, Discord ephemeral
   * interaction replies, a terminal nobody else reads). Without it every answer is public.
   */
  ephemeral: boolean;
  /** The longest message the platform takes, in rendered characters. */
  maxMessageLength: number;
  /** Lines per message before a long answer is split for readability (Infinity: no such cap). */
  maxMessageLines: number;
  /** Least time between two edits of a working message (the platform's edit rate limit). */
  minEditIntervalMs: number;
}

/** Where one reply, or one post the core starts, lands: the adapter's handle on that place. */
export interface ReplyTarget {
  /** The platform channel the parts are posted in: deliveries are recorded under it. */
  readonly channelId: string;
  /** Posts one rendered part (within the limit) and returns its platform id. */
  send(text: string): Promise<string>;
  /** Replaces a part's text; present when the platform can edit. */
  edit?(id: string, text: string): Promise<void>;
  /** Deletes a working part the final answer does not need. */
  remove?(id: string): Promise<void>;
  /** Marks the person's message as being worked on (👀, typing); the result takes the mark off. */
  working?(): Promise<() => Promise<void>>;
  /** The thread's earlier messages, read when cairn is first addressed in a thread it was not in. */
  threadContext?(): Promise<string>;
  /**
   * A platform that shows a turn its own way: streaming natively (a terminal), or building on the
   * core's post-and-edit draft (`draft`: how the core drafts on this platform) with something added.
   */
  surface?(draft: DraftOptions): ReplySurface;
  /**
   * Posts a message the core starts itself in the platform's rich form (Slack blocks, a Discord
   * embed), as one message, and returns its platform id; null when the platform's limits cannot
   * hold it, and the core then posts `fallbackMarkdown` as text parts, as without this method.
   * `fallbackMarkdown` is the same post as Markdown (what history stores), for a platform that
   * shows a text beside the rich form (notifications, clients without it).
   */
  sendRich?(post: RichPost, fallbackMarkdown: string): Promise<string | null>;
}

/**
 * A post the core starts itself (a report), in a platform-neutral rich form: a title, sections,
 * a footer. Each platform builds its own layout from it; the Markdown text of the same post is
 * always given beside it, so a platform without a rich form loses nothing.
 */
export interface RichPost {
  /** Plain text (no Markdown): the post's header line. */
  title: string;
  sections: RichSection[];
  /** Plain text, small print under the post. */
  footer?: string;
}

export interface RichSection {
  /** Plain text (no Markdown): the section's name. */
  heading?: string;
  /** The section's body, in Markdown (cairn's one text format), rendered by the adapter. */
  markdown: string;
  /**
   * Buttons under the section (Slack actions, Discord message components). Each is a command line:
   * a click runs it as the clicker, as if they had typed it (their rights). The Markdown lists the
   * same commands typed, for platforms and clients without buttons.
   */
  buttons?: readonly ViewButton[];
}

/**
 * Where a command's answer goes, handed to the core with the command (`CorePort.answer`). A public
 * answer is posted at `place` like the core's own posts: stored in history, every part recorded
 * as a delivery, so a reaction on it reaches `feedback`. A private one goes to `private`, where
 * the platform can show it (`Capabilities.ephemeral`), and is recorded nowhere: nobody else sees
 * it, and it can carry no reactions.
 */
export interface CommandTarget {
  /** The place the command was asked in. Absent: every answer is private (a view's buttons: the view is the asker's own). */
  readonly place?: ReplyTarget;
  /** Shows an answer to the asker alone, part by part. */
  readonly private?: PrivateReply;
}

export interface PrivateReply {
  /** Shows one rendered part (within the platform's limits) to the asker alone. */
  send(text: string): Promise<void>;
}

/** How a command's answer was shown. */
export interface Answered {
  visibility: "public" | "private";
  /** Public: the stored id of the answer (history), under which its deliveries are recorded; null if nothing was posted. */
  messageId: number | null;
  /** Public: the platform ids of its parts. */
  posted: string[];
  /** A part could not be shown. */
  failed: boolean;
}

/** What a turn shows while it runs, and its final answer. Markdown in, the platform's text out. */
export interface ReplySurface {
  /** A short status while cairn works ("searching history"). Synchronous; never throws. */
  progress(status: string): void;
  /** The answer as the model writes it, delta by delta. Synchronous; never throws. */
  text(delta: string): void;
  /** The text streamed since the last reset was a preamble to tool calls, not the answer. */
  reset(): void;
  /**
   * Shows the final answer over whatever the draft showed; the ids of every part carrying it.
   * `kind`: "answer" for the model's reply to the person, "notice" for an apology, refusal or limit
   * (a platform may put feedback controls on answers only).
   */
  finish(markdown: string, kind?: FinishKind): Promise<Shown>;
  /** Nothing is to be shown after all: take down what the draft showed. */
  cancel(): Promise<void>;
}

export type FinishKind = "answer" | "notice";

export interface Shown {
  /** Platform ids of the parts that carry the answer, in order. */
  posted: string[];
  /** The platform refused a part for good; what was posted is still listed. */
  failed: boolean;
}

/** A message the core starts itself: a question, a proposal, a report. */
export type PostTarget =
  /**
   * A channel's main line, or a thread in it (`threadId`). `answers`: the platform id of the
   * person's message this post answers (a reply finished by crash recovery); a platform that can
   * mark posts with it does (`postedFor` finds them again).
   */
  | { kind: "channel"; workspace: string; channel: string; threadId?: string | null; answers?: string }
  /** A person's direct messages with cairn. */
  | { kind: "dm"; workspace: string; person: string };

export interface PlatformAdapter {
  readonly platform: Platform;
  readonly capabilities: Capabilities;
  /** Markdown (cairn's one text format) to the platform's own text. Pure. */
  render(markdown: string): string;
  /** Connects and starts delivering events to the core; resolves once connected. */
  start(core: CorePort): Promise<void>;
  /** Stops taking events, lets replies in flight finish (bounded), disconnects. */
  stop(): Promise<void>;
  /**
   * Whether the adapter is started and its link to the platform is up now (a socket open, a server
   * listening): what `/readyz` reports. Absent: the adapter cannot tell, and counts as connected.
   */
  connected?(): boolean;
  /** The place a post the core starts itself goes to (a DM is opened if need be). */
  open(target: PostTarget): Promise<ReplyTarget>;
  /**
   * Takes the working mark (👀) off a person's message whose turn was finished by another process
   * than the one that marked it (crash recovery). Absent where the mark ends by itself (typing).
   */
  clearWorking?(channelId: string, messageId: string): Promise<void>;
  /**
   * The posts cairn already made answering the person's message `messageId` (marked when posted;
   * drafts included), oldest first: how crash recovery tells a reply posted just before a crash
   * (whose delivery was never recorded) from one never posted, so it is not posted twice. Absent
   * where the platform cannot mark posts.
   */
  postedFor?(channelId: string, threadId: string | null, messageId: string): Promise<PostedPart[]>;
  /**
   * Channel knowledge (src/knowledge): a page of a channel's history, newest first, back to
   * `oldest`; `cursor` continues a page's `next`. Within the platform's rate limits (waiting on them).
   */
  channelHistory?(workspace: string, channel: string, page: { cursor: string | null; oldest: Date; limit: number }): Promise<HistoryPage>;
  /** Everyone who is a member of the channel now (platform user ids): who may search what it said. */
  channelMembers?(workspace: string, channel: string): Promise<string[]>;
  /**
   * Of `channels`, those the person can read now, for a platform where that follows from roles and
   * permissions rather than a member list (Discord). Wins over `channelMembers`.
   */
  canRead?(workspace: string, person: string, channels: readonly string[]): Promise<string[]>;
  /** What kind of conversation a channel id is: cairn never listens in DMs or group DMs. */
  channelKind?(workspace: string, channel: string): Promise<"channel" | "dm" | "group_dm">;
}

/** One of cairn's posts as the platform shows it now. */
export interface PostedPart {
  id: string;
  text: string;
}

/** What the delivery path did with an inbound message. */
export type Received =
  /** `stopping`: the process is stopping; the stored answer is posted by the process that takes its lease. */
  /** `waiting_for_storage`: kept in the journal, answered once storage is back (its conversation was told). */
  | { kind: "dropped"; reason: "duplicate" | "bot" | "empty" | "not_addressed" | "stopping" | "taken_over" | "waiting_for_storage" }
  | { kind: "replied"; status: "ok" | "failed" | "refused" | "limited" | "command"; replyMessageId: number | null; posted: string[]; failed: boolean }
  /** A refusal for someone chatting in a followed thread: they did not ask cairn anything. */
  | { kind: "silent"; status: "refused" };

export interface Posted {
  /** The stored id of the post (history), under which its deliveries are recorded. */
  messageId: number;
  posted: string[];
  failed: boolean;
}

export interface ReceiveOptions {
  /**
   * The message's event is in the inbound journal (`CorePort.journal`): told exactly once what
   * became of the message. `failed` (storage unavailable): the journal hands it in again later, and
   * the person is told cairn will answer then. Without it, a failure to store is told as such.
   */
  kept?: (outcome: StoreOutcome) => void;
  /** Kept, and its conversation waits for storage (`KeptEvent.held`): marked as waiting, not stored now. */
  held?: boolean;
}

/** The narrow part of the core an adapter talks to. */
export interface CorePort {
  /** One message from a person: the whole turn, from admission to the recorded delivery. */
  receive(inbound: Inbound, target: ReplyTarget, opts?: ReceiveOptions): Promise<Received>;
  /**
   * A reaction on a message: feedback when it is on one of cairn's replies. The event's emoji is
   * canonical (the character, without skin tone: types.ts `FeedbackEvent.emoji`).
   */
  feedback(event: FeedbackEvent): Promise<FeedbackResult>;
  /** Ends the conversation's session: the next message starts a fresh one (earlier ones stay searchable). */
  endSession(inbound: Inbound, reason: "request" | "restart"): Promise<void>;
  /**
   * `/cairn <name> <args>` (a slash command, a console command, a view's button that runs one),
   * asked by `inbound`'s author: the core runs it and shows the answer through `target`, rendered
   * and chunked with this adapter's `render` and limits; a failure is answered with the core's one
   * apology. Never throws for the command's sake. `call.args` are Markdown: the adapter turns its
   * platform's link markup into Markdown links (Slack's `<url|label>` into `[label](url)`), and
   * answers itself what only its platform explains (a Slack slash command, which names no thread,
   * cannot `learn` from one: src/platforms/slack/commands/slash.ts).
   */
  answer(inbound: Inbound, call: CommandCall, target: CommandTarget): Promise<Answered>;
  /**
   * The bare answer in Markdown, for surfaces that are not messages: the Slack Home tab (a button's
   * result goes on the tab or into a modal) and a Discord view drawn for someone refused (the
   * refusal is the view's body). Nothing is shown or recorded; a failure throws.
   */
  command(inbound: Inbound, name: CommandName, args?: readonly string[]): Promise<CommandReply>;
  /**
   * What the author of `inbound` may see of cairn's memory, with buttons (views/model.ts): the Home
   * tab, `/cairn me|team|skills` as embeds. A click on a button is a `command` with its clicker.
   */
  view(inbound: Inbound, request: ViewRequest): Promise<TeamView>;
  /**
   * Everything said and done in channels (not DMs): new messages, edits, deletions, members coming
   * and going. The core keeps those of channels it listens in, as channel knowledge, and ignores
   * the rest; adapters send them all, beside `receive` for messages that may be turns.
   */
  observe(event: ChannelEvent): Promise<void>;
  /**
   * Whether this process is the first, of all processes sharing the database, to take the platform
   * event `key`. Platforms that deliver every event to every replica (Discord's gateway) claim before
   * acting on one; `windowMs` lets a key without an id of its own (a reaction) be taken again later.
   */
  claim(key: string, windowMs?: number): Promise<boolean>;
  /**
   * Where an adapter keeps a person's message before acknowledging its platform, and how kept
   * messages come back to it (ground/journal.ts): live at once, replayed after an outage or a restart.
   */
  readonly journal: InboundJournal;
  readonly log: Logger;
}

/**
 * What wires adapters to the core. `attach` returns the port the adapter hands its events to: its
 * replies are rendered and chunked by that adapter; the core's own posts to the platform go through
 * the adapter attached last for it.
 */
export interface AdapterHost {
  attach(adapter: PlatformAdapter): CorePort;
}
