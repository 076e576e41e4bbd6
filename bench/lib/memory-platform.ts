/**
 * A chat platform held in memory, for the learning benchmark and `npm run demo:learning`: a real
 * adapter of the core's contract (src/core/adapter.ts), so messages, reactions and the core's own
 * posts take the same delivery path as on Slack (replies in the thread of the message, reactions
 * traced through recorded deliveries, the learning jobs queued after delivery). Markdown is shown
 * as written. What a person would see is kept per channel and thread.
 */
import type { CorePort, PlatformAdapter, PostTarget, Received, ReplyTarget } from "../../src/ground/adapter.ts";
import type { FeedbackResult } from "../../src/ground/types.ts";
import { slackEmoji } from "../../src/platforms/slack/emoji.ts";
import { FALLBACK_WORKSPACE_URL, permalink } from "../../src/platforms/slack/permalink.ts";

export interface ShownMessage {
  id: string;
  channel: string;
  /** The thread's root id; null on a channel's main line or in a DM. */
  thread: string | null;
  author: string;
  fromCairn: boolean;
  text: string;
  /** When it was shown (performance.now()): the cost benchmark times a reply to its post. */
  at: number;
}

export interface SaidResult {
  message: ShownMessage;
  received: Received;
  /** cairn's parts answering it (empty when it did not answer). */
  replies: ShownMessage[];
}

export class MemoryPlatform implements PlatformAdapter {
  readonly platform = "slack" as const;
  readonly capabilities = { edits: false, reactions: true, ephemeral: false, threads: true, maxMessageLength: 40_000, maxMessageLines: Infinity, minEditIntervalMs: 0 };
  readonly shown: ShownMessage[] = [];
  /** Each shown message by its id: a reply's parts are found by the ids the core says it posted. */
  private readonly byId = new Map<string, ShownMessage>();
  private port: CorePort | null = null;
  private seq = 0;

  constructor(readonly workspace: string) {}

  render(markdown: string): string {
    return markdown;
  }

  async start(core: CorePort): Promise<void> {
    this.port = core;
  }

  async stop(): Promise<void> {
    this.port = null;
  }

  private nextId(): string {
    this.seq++;
    return `${1_700_000_000 + this.seq}.${String(this.seq).padStart(6, "0")}`;
  }

  private target(channel: string, thread: string | null): ReplyTarget {
    return {
      channelId: channel,
      send: async (text) => {
        const id = this.nextId();
        this.show({ id, channel, thread, author: "cairn", fromCairn: true, text, at: performance.now() });
        return id;
      },
    };
  }

  async open(target: PostTarget): Promise<ReplyTarget> {
    if (target.kind === "dm") return this.target(`D-${target.person}`, null);
    return this.target(target.channel, target.threadId ?? null);
  }

  private get core(): CorePort {
    if (!this.port) throw new Error("the memory platform is not started");
    return this.port;
  }

  /**
   * `user` posts `text` in `channel` (in `thread`, or on the main line), addressing cairn; in a
   * channel cairn answers in the message's thread, as on Slack. `channel` "dm" is the person's DMs.
   */
  async say(user: string, channel: string, text: string, thread: string | null = null, at = new Date()): Promise<SaidResult> {
    const isDm = channel === "dm";
    const where = isDm ? `D-${user}` : channel;
    const id = this.nextId();
    const message: ShownMessage = { id, channel: where, thread, author: user, fromCairn: false, text, at: performance.now() };
    this.show(message);
    const replyThread = isDm ? null : (thread ?? id);
    const received = await this.core.receive(
      {
        platform: this.platform,
        workspace: { externalId: this.workspace },
        author: { externalId: user, displayName: user },
        channel: { externalId: where, isDm },
        // As on Slack: a channel message is its own thread's root, so its answer and what follows share a conversation.
        threadId: isDm ? null : (thread ?? id),
        messageId: id,
        // As the Slack adapter links a person's message (src/platforms/slack/events.ts).
        link: permalink(FALLBACK_WORKSPACE_URL, where, id, isDm ? null : (thread ?? id)),
        text,
        sentAt: at,
      },
      this.target(where, replyThread),
    );
    // By id, not by what was shown since: in a burst, other conversations' posts come in between.
    const replies = received.kind === "replied" ? received.posted.flatMap((p) => this.byId.get(p) ?? []) : [];
    return { message, received, replies };
  }

  private show(m: ShownMessage): void {
    this.shown.push(m);
    this.byId.set(m.id, m);
  }

  /** `user` reacts with `emoji` (a Slack name) to message `id`: the core gets its character, as from the Slack adapter. */
  react(user: string, message: ShownMessage, emoji: string, at = new Date()): Promise<FeedbackResult> {
    return this.core.feedback({
      platform: this.platform,
      workspace: { externalId: this.workspace },
      reactor: { externalId: user, displayName: user },
      channel: { externalId: message.channel, isDm: message.channel.startsWith("D-") },
      targetMessageId: message.id,
      emoji: slackEmoji(emoji),
      action: "added",
      at,
    });
  }

  /** cairn's latest message in a place containing `fragment`. */
  cairnSaid(channel: string, thread: string | null, fragment: string): ShownMessage | undefined {
    return this.shown.findLast((m) => m.fromCairn && m.channel === channel && m.thread === thread && m.text.includes(fragment));
  }
}
