/**
 * Crash recovery: the turns a dead (or stopped) process left, finished by whichever process holds
 * the conversation next, at start-up or when another replica's leases run out (leases.ts).
 *
 * Invariants kept here:
 * - A person's message whose turn was lost is answered once, in its conversation's order, unless
 *   it is older than `maxAgeMs`: then the person is told it was not answered and asked to repeat.
 * - A reply stored but not posted is posted as stored: the model is not asked again; one the
 *   platform shows already (posted just before the crash) is recorded, not posted again.
 * - A turn waits for the earlier messages of its conversation (by the platform's time) that other
 *   processes are working on, and takes over those whose process is gone, so replies stay in order
 *   across replicas.
 * - The working mark (👀) on a recovered message is taken off either way.
 */
import { didYouMean, typedCommand } from "../ground/typed-command.ts";
import type { Conversation, Message, Place, Workspace } from "../history/store/store.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { errText, type Logger } from "../ground/log.ts";
import type { TurnLeases } from "./leases.ts";
import type { LeaseStore } from "./lease-store.ts";
import type { ConversationScope, Outbound, Platform } from "../ground/types.ts";

export interface RecoverySettings {
  /** A lost turn older than this is not answered late: the person is asked to repeat it. */
  maxAgeMs: number;
  /**
   * How old (by the platform's time) a message must be before its turn starts, so that one sent
   * just before it and delivered to another replica is answered first. 0: no wait (one process).
   */
  orderWindowMs: number;
}

export const DEFAULT_RECOVERY: RecoverySettings = { maxAgeMs: 10 * 60_000, orderWindowMs: 0 };

export interface RecoveryDeps {
  /** Reads the turns taken over (their rows, author and stored reply). */
  store: Pick<LeaseStore, "taken">;
  leases: TurnLeases;
  settings: RecoverySettings;
  /** Platforms this process can post to: only their conversations are taken over. */
  platforms(): Platform[];
  /** Runs work in the conversation's turn queue (after the turns queued there already). */
  inQueue<T>(conversationKey: string, work: () => Promise<T>): Promise<T>;
  /** The turn for a stored message: the model is asked, the reply stored under a lease. */
  answer(place: Place, sessionId: string | null, messageId: number): Promise<Outbound | null>;
  /**
   * Stores `text` as the failed reply to a message (the trigger marks the message failed), or, for
   * a `command` typed without its slash, as the pointer to it (sent, as the intake stores it).
   */
  giveUp(place: Place, sessionId: string | null, messageId: number, text: string, command?: boolean): Promise<Outbound | null>;
  /** Posts a stored reply into its conversation (`answers`: the person's message); whether it is on the platform. */
  post(reply: Outbound, workspace: Workspace, conversation: Conversation, answers: string | null): Promise<boolean>;
  /** Takes the working mark off a person's message. */
  clearWorking(platform: Platform, channelId: string, platformMessageId: string): Promise<void>;
  log: Logger;
  now(): Date;
}

export function notAnsweredText(message: Pick<Message, "text" | "createdAt">): string {
  const at = message.createdAt.toISOString().slice(0, 16).replace("T", " ");
  return `Sorry, I was restarted before I could answer your message of ${at} UTC ("${excerpt(message.text, 80)}"). Please send it again if you still need an answer.`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Recovery {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  /** Conversations being recovered by this process (a sweep does not queue them twice). */
  private readonly under = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: RecoveryDeps) {}

  /** Sweeps now (the turns lost before this start) and then every half lease. */
  start(): Promise<void> {
    this.stopped = false;
    if (!this.timer) {
      this.timer = setInterval(() => void this.sweep(), Math.max(100, Math.floor(this.deps.leases.settings.leaseMs / 2)));
      this.timer.unref();
    }
    return this.sweep();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  /** Queues the recovery of every conversation with expired leases; resolves once they are queued. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        await this.deps.leases.expireDead();
        const conversations = await this.deps.leases.expiredConversations(this.deps.platforms());
        for (const { scope, key } of conversations) {
          const id = scope.conversationId;
          if (this.stopped || this.under.has(id)) continue;
          this.under.add(id);
          void this.deps
            .inQueue(key, () => this.recoverConversation(scope))
            .catch((err: unknown) => this.deps.log.error({ err, conversation: id }, "could not recover a conversation's lost turns"))
            .finally(() => this.under.delete(id));
        }
      } catch (err) {
        this.deps.log.warn({ err: errText(err) }, "could not look for lost turns");
      } finally {
        this.sweeping = null;
      }
    })();
    return this.sweeping;
  }

  /**
   * `before`'s first part alone: waits until `m` is `orderWindowMs` old (no wait in one process), so
   * that a message sent just before it and delivered to another replica is stored by now. The turn's
   * first read then looks for the turns ahead (turn-start-store.ts), and `before` runs only when it
   * saw one.
   */
  async settle(m: { createdAt: Date }): Promise<void> {
    const young = this.youngFor(m.createdAt);
    if (young > 0) await sleep(young);
  }

  /** Whether `settle` would not wait for a message sent at `sentAt`: no order window, or the message is past it. */
  settled(sentAt: Date): boolean {
    return this.youngFor(sentAt) <= 0;
  }

  /** How long a message sent at `sentAt` is still to wait for the order window (0 or less: none). */
  private youngFor(sentAt: Date): number {
    const window = this.deps.settings.orderWindowMs;
    if (window <= 0) return 0;
    return Math.min(window, window - (this.deps.now().getTime() - sentAt.getTime()));
  }

  /**
   * One look, no wait: whether another process works on an earlier message of `m`'s conversation
   * (`before` waits until none does). A turn that finds one waits with `before`.
   */
  async anyAhead(scope: ConversationScope, m: { id: number; createdAt: Date }): Promise<boolean> {
    return (await this.deps.leases.ahead(scope, m)).length > 0;
  }

  /**
   * Before the turn of message `m`: waits while other live processes work on its conversation's
   * earlier messages, and finishes those whose process is gone. Called in the conversation's queue.
   * With an order window, first waits until `m` is that old: a message sent just before it but
   * delivered to another replica has been stored by then, and is answered first.
   */
  async before(scope: ConversationScope, m: { id: number; createdAt: Date }): Promise<void> {
    await this.settle(m);
    let wait = 20;
    // A process of this machine that is gone: its leases are ended once, not waited out.
    let deadChecked = false;
    for (;;) {
      const ahead = await this.deps.leases.ahead(scope, m);
      if (ahead.length === 0) return;
      if (!deadChecked && ahead.some((a) => !this.deps.leases.isExpired(a) && this.deps.leases.ownerGone(a.owner))) {
        deadChecked = true;
        await this.deps.leases.expireDead();
        continue;
      }
      const expired = ahead.filter((a) => this.deps.leases.isExpired(a));
      if (expired.length) {
        await this.recoverConversation(scope, expired.map((a) => a.id));
        continue;
      }
      await sleep(wait);
      wait = Math.min(250, wait * 2);
    }
  }

  /**
   * Takes over the conversation's expired leases (`only`: just these messages) and finishes those
   * turns in the order their messages were sent.
   */
  async recoverConversation(scope: ConversationScope, only?: readonly number[]): Promise<number> {
    const claimed = await this.deps.leases.claimExpired(scope, only);
    for (const id of claimed) {
      try {
        await this.finish(scope, id);
      } catch (err) {
        // Left leased: it expires again and the next sweep retries it.
        this.deps.log.error({ err, message: id }, "could not finish a lost turn");
      }
    }
    return claimed.length;
  }

  private async finish(scope: ConversationScope, id: number): Promise<void> {
    const { leases, log } = this.deps;
    const taken = await this.deps.store.taken(scope, id, leases.owner);
    if (!taken) return;
    const { message: row, conversation, workspace, author } = taken;
    const platform = workspace.platform as Platform;
    if (row.role !== "user" || !author) return void (await leases.end(row.id));
    if (row.status !== "received") {
      // Answered, and the reply stored: the process died before it was on the platform.
      const stored = taken.reply;
      if (!stored || stored.platformId !== null) return void (await leases.end(row.id));
      const reply: Outbound = { status: stored.status === "failed" ? "failed" : "ok", text: stored.text, conversationId: conversation.id, replyMessageId: stored.id };
      await this.postReply(reply, row.id, workspace, conversation, row.platformId);
      if (row.platformId) await this.deps.clearWorking(platform, conversation.channelId, row.platformId);
      log.info({ reply: stored.id, conversation: conversation.id }, "a stored reply left unposted was posted");
      return;
    }
    const place: Place = { workspace, person: author, conversation };
    const age = this.deps.now().getTime() - row.createdAt.getTime();
    const late = age > this.deps.settings.maxAgeMs;
    // A command typed without its slash is never a turn, not even one recovered after a crash: it is
    // pointed to, as the intake would have (never run here, where nothing asks as its author).
    const typed = typedCommand(row.text);
    const reply = typed
      ? await this.deps.giveUp(place, row.sessionId, row.id, didYouMean(platform, typed.call), true)
      : late
        ? await this.deps.giveUp(place, row.sessionId, row.id, notAnsweredText(row))
        : await this.deps.answer(place, row.sessionId, row.id);
    // Null: yet another process took it over meanwhile (this one stalled past its lease); it posts.
    if (!reply) return;
    await this.postReply(reply, row.id, workspace, conversation, row.platformId);
    if (row.platformId) await this.deps.clearWorking(platform, conversation.channelId, row.platformId);
    log.info({ message: row.id, conversation: conversation.id, ageMs: age, answered: !late }, late ? "a lost turn was too old: the person was asked to repeat it" : "a lost turn was answered");
  }

  private async postReply(reply: Outbound, messageId: number, workspace: Workspace, conversation: Conversation, answers: string | null): Promise<void> {
    const posted = await this.deps.post(reply, workspace, conversation, answers);
    // Nothing reached the platform: the turn ends (the reply stays stored), so it is not retried forever.
    if (!posted) await this.deps.leases.end(messageId);
  }
}
