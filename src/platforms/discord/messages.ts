/**
 * One Discord message through cairn: classify, show typing, run the turn, post the parts, record
 * where they went (so reactions on any part reach the core as feedback).
 *
 * Ordering: messages of one channel are classified one after another and handed to the core in
 * arrival order (classification can wait on REST — a reply's reference, a thread lookup — and a
 * later message must not overtake an earlier one), and their answers are posted in that order too.
 * The turns themselves run in the core's per-conversation queue; the adapter does not wait for one
 * turn before classifying the next.
 *
 * Exactly once: a message replayed by the gateway after a resume, or delivered twice, is stored once
 * by the core (dedupe on the Discord message id) and answered once; the duplicate is dropped quietly.
 */
import type { Message } from "discord.js";
import type { Core } from "../../core/core.ts";
import type { HandleResult } from "../../core/types.ts";
import type { Logger } from "../../log.ts";
import { KeyedQueue } from "../../core/keyed-queue.ts";
import { classify, NOTICES, type Trigger } from "./events.ts";
import type { ThreadFollower } from "./follow.ts";
import { postReply } from "./reply.ts";
import { startTyping } from "./typing.ts";

export const INTERNAL_ERROR_NOTICE = "Sorry, something went wrong on my side before I could answer. Please try again in a moment.";

export interface MessageHandlerDeps {
  core: Core;
  log: Logger;
  follower: ThreadFollower;
  botId: () => string;
  typingIntervalMs: number;
}

type Settled = { ok: HandleResult } | { err: unknown };

export class MessageHandler {
  /** Intake: classification and hand-off to the core, in arrival order per channel. */
  private readonly intake = new KeyedQueue(Number.MAX_SAFE_INTEGER);
  /**
   * Delivery: posting, in the same order per channel. On Discord a channel (main line, thread or
   * DM) is one conversation, whose turns the core runs one by one; without this queue a quick
   * answer (a rate-limit notice, a duplicate) could still be posted before a slower one ahead of it.
   */
  private readonly delivery = new KeyedQueue(Number.MAX_SAFE_INTEGER);

  constructor(private readonly deps: MessageHandlerDeps) {}

  async handle(message: Message): Promise<void> {
    // The delivery promise travels in an object: returned bare, run() would wait for it in the intake queue.
    const { delivered } = await this.intake.run(message.channelId, () => this.start(message));
    await delivered;
  }

  /** Runs inside the channel's intake queue: decide, hand a turn to the core, queue its delivery. */
  private async start(message: Message): Promise<{ delivered: Promise<void> }> {
    const { core, follower, botId, typingIntervalMs, log } = this.deps;
    const classified = await classify(message, { botId: botId(), isFollowedThread: (m) => follower.isFollowed(m) });
    const { decision, inbound } = classified;
    if (decision.kind === "ignore") {
      log.trace({ message: message.id, reason: decision.reason }, "message ignored");
      return { delivered: Promise.resolve() };
    }
    if (decision.kind === "notice") {
      const notice = NOTICES[decision.notice];
      return { delivered: this.delivery.run(message.channelId, async () => void (await this.post(message, notice, "notice"))) };
    }
    if (!inbound) return { delivered: Promise.resolve() };
    if (inbound.threadId) follower.follow(inbound.threadId);
    const channel = message.channel;
    const typing = channel.isSendable()
      ? startTyping(channel, typingIntervalMs, (err) => log.debug({ err: errText(err), channel: message.channelId }, "typing indicator failed"))
      : null;
    // Settled, never rejected: nothing may reject unobserved while it waits in the delivery queue.
    const turn = core.handle(inbound).then(
      (ok): Settled => ({ ok }),
      (err: unknown): Settled => ({ err }),
    );
    const delivered = this.delivery.run(message.channelId, async () => {
      let settled: Settled;
      try {
        settled = await turn;
      } finally {
        typing?.stop();
      }
      await this.finish(message, decision.trigger, settled);
    });
    return { delivered };
  }

  private async finish(message: Message, trigger: Trigger, settled: Settled): Promise<void> {
    const { core, log } = this.deps;
    if ("err" in settled) {
      log.error({ err: settled.err, message: message.id }, "turn failed before an answer");
      await this.post(message, INTERNAL_ERROR_NOTICE, "apology");
      return;
    }
    const result = settled.ok;
    if (result.kind === "dropped") {
      log.debug({ message: message.id, reason: result.reason }, "message dropped by the core");
      return;
    }
    const { reply } = result;
    // Someone chatting in a thread cairn follows never asked cairn anything: no refusal notice for them.
    if (reply.status === "refused" && trigger === "thread") {
      log.debug({ message: message.id }, "refused in a followed thread; not answered");
      return;
    }
    const ids = await this.post(message, reply.text, "reply");
    if (ids.length === 0) return;
    try {
      await core.recordDelivery(reply, message.channelId, ids);
    } catch (err) {
      log.error({ err, reply: reply.replyMessageId }, "could not record the delivery; reactions on it will be ignored");
    }
  }

  private async post(message: Message, text: string, what: string): Promise<string[]> {
    const { ids, error } = await postReply(message, text);
    if (error) this.deps.log.warn({ err: errText(error), channel: message.channelId, what, delivered: ids.length }, "Discord post failed");
    return ids;
  }
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
