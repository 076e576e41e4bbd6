/**
 * Crash recovery: the turns a dead (or stopped) process left, finished by whichever process holds
 * the conversation next, at start-up or when another replica's leases run out (leases.ts).
 *
 * Invariants kept here:
 * - A person's message whose turn was lost is answered once, in its conversation's order, unless
 *   it is older than `maxAgeMs`: then the person is told it was not answered and asked to repeat.
 * - A reply stored but not posted is posted as stored: the model is not asked again, and a reply
 *   with a recorded delivery is never posted again.
 * - A turn waits for the earlier messages of its conversation that other processes are working on,
 *   and takes over those whose process is gone, so replies stay in order across replicas.
 * - The working mark (👀) on a recovered message is taken off either way.
 */
import type { Db } from "../db/client.ts";
import type { Conversation, Message, Workspace } from "../db/generated/sqlite/client.ts";
import type { Place } from "../history/store.ts";
import { excerpt } from "../learning/lesson-case.ts";
import { errText, type Logger } from "../log.ts";
import type { TurnLeases } from "./leases.ts";
import type { Outbound, Platform } from "./types.ts";

export interface RecoverySettings {
  /** A lost turn older than this is not answered late: the person is asked to repeat it. */
  maxAgeMs: number;
}

export const DEFAULT_RECOVERY: RecoverySettings = { maxAgeMs: 10 * 60_000 };

export interface RecoveryDeps {
  db: Db;
  leases: TurnLeases;
  settings: RecoverySettings;
  /** Platforms this process can post to: only their conversations are taken over. */
  platforms(): Platform[];
  /** Runs work in the conversation's turn queue (after the turns queued there already). */
  inQueue<T>(conversationKey: string, work: () => Promise<T>): Promise<T>;
  /** The turn for a stored message: the model is asked, the reply stored under a lease. */
  answer(place: Place, sessionId: string | null, messageId: number): Promise<Outbound | null>;
  /** Stores `text` as the failed reply to a message (the trigger marks the message failed). */
  giveUp(place: Place, sessionId: string | null, messageId: number, text: string): Promise<Outbound | null>;
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
        const conversations = await this.deps.leases.expiredConversations(this.deps.platforms());
        for (const id of conversations) {
          if (this.stopped || this.under.has(id)) continue;
          const conversation = await this.deps.db.conversation.findUnique({ where: { id } });
          if (!conversation) continue;
          this.under.add(id);
          void this.deps
            .inQueue(conversation.key, () => this.recoverConversation(id))
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
   * Before the turn of `messageId`: waits while other live processes work on its conversation's
   * earlier messages, and finishes those whose process is gone. Called in the conversation's queue.
   */
  async before(conversationId: string, messageId: number): Promise<void> {
    let wait = 20;
    for (;;) {
      const ahead = await this.deps.leases.ahead(conversationId, messageId);
      if (ahead.length === 0) return;
      if (ahead.some((a) => this.deps.leases.isExpired(a))) {
        await this.recoverConversation(conversationId, messageId);
        continue;
      }
      await sleep(wait);
      wait = Math.min(250, wait * 2);
    }
  }

  /**
   * Takes over the conversation's expired leases and finishes that work in id order. `before`:
   * only rows ahead of this message's turn (the caller's own message is answered by the caller).
   */
  async recoverConversation(conversationId: string, before?: number): Promise<number> {
    const claimed = await this.deps.leases.claimExpired(conversationId, before);
    for (const id of claimed) {
      try {
        await this.finish(id);
      } catch (err) {
        // Left leased: it expires again and the next sweep retries it.
        this.deps.log.error({ err, message: id }, "could not finish a lost turn");
      }
    }
    return claimed.length;
  }

  private async finish(id: number): Promise<void> {
    const { db, leases, log } = this.deps;
    const row = await db.message.findFirst({ where: { id, leaseOwner: leases.owner }, include: { conversation: { include: { workspace: true } } } });
    if (!row) return;
    const { conversation } = row;
    const { workspace } = conversation;
    const platform = workspace.platform as Platform;
    if (row.role === "assistant") {
      const question = row.replyToId === null ? null : await db.message.findFirst({ where: { id: row.replyToId, conversationId: conversation.id } });
      if (row.platformId !== null) return void (await leases.end(row.id));
      const reply: Outbound = { status: row.status === "failed" ? "failed" : "ok", text: row.text, conversationId: conversation.id, replyMessageId: row.id };
      await this.postReply(reply, workspace, conversation, question?.platformId ?? null);
      if (question?.platformId) await this.deps.clearWorking(platform, conversation.channelId, question.platformId);
      log.info({ reply: row.id, conversation: conversation.id }, "a stored reply left unposted was posted");
      return;
    }
    const author = row.authorId ? await db.person.findFirst({ where: { id: row.authorId, workspaceId: workspace.id } }) : null;
    if (row.role !== "user" || row.status !== "received" || !author) return void (await leases.end(row.id));
    const place: Place = { workspace, person: author, conversation };
    const age = this.deps.now().getTime() - row.createdAt.getTime();
    const late = age > this.deps.settings.maxAgeMs;
    const reply = late ? await this.deps.giveUp(place, row.sessionId, row.id, notAnsweredText(row)) : await this.deps.answer(place, row.sessionId, row.id);
    // Null: yet another process took it over meanwhile (this one stalled past its lease); it posts.
    if (!reply) return;
    await this.postReply(reply, workspace, conversation, row.platformId);
    if (row.platformId) await this.deps.clearWorking(platform, conversation.channelId, row.platformId);
    log.info({ message: row.id, conversation: conversation.id, ageMs: age, answered: !late }, late ? "a lost turn was too old: the person was asked to repeat it" : "a lost turn was answered");
  }

  private async postReply(reply: Outbound, workspace: Workspace, conversation: Conversation, answers: string | null): Promise<void> {
    const posted = await this.deps.post(reply, workspace, conversation, answers);
    // Nothing reached the platform: the reply's lease ends (it stays stored), so it is not retried forever.
    if (!posted && reply.replyMessageId !== null) await this.deps.leases.end(reply.replyMessageId);
  }
}
