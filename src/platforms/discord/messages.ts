/**
 * One Discord message to the core: classify it, then hand it to the core's delivery path with the
 * place its answer goes. Dedupe (a message replayed by the gateway after a resume), thread
 * following, drafts, chunking and deliveries are the core's.
 *
 * Ordering: messages of one channel are classified one after another and handed to the core in
 * arrival order (classification can wait on REST, a reply's reference, and a later message must
 * not overtake an earlier one); the core keeps that order through the turn and the posting.
 */
import type { Message, MessageMentionOptions } from "discord.js";
import type { CorePort } from "../../ground/adapter.ts";
import { errText, type Logger } from "../../ground/log.ts";
import { KeyedQueue } from "../../ground/keyed-queue.ts";
import { classify, NOTICES } from "./events.ts";
import { messageTarget } from "./target.ts";
import { noticeKey, type Claim } from "./event-claims.ts";
import type { StoreOutcome } from "../../ground/journal.ts";
import { mentionCommand } from "../../ground/commands.ts";
import type { Inbound } from "../../ground/types.ts";

export interface MessageHandlerDeps {
  core: CorePort;
  log: Logger;
  botId: () => string;
  typingIntervalMs: number;
  /** What replies may ping (target.ts allowedMentions). */
  mentions: MessageMentionOptions;
  /** Takes an event for this replica (event-claims.ts): a notice is posted by one replica. */
  claim: Claim;
}

export class MessageHandler {
  /** Classification and hand-off to the core, in arrival order per channel. */
  private readonly intake = new KeyedQueue(Number.MAX_SAFE_INTEGER);

  constructor(private readonly deps: MessageHandlerDeps) {}

  /** `kept`: the message is in the inbound journal, told what became of it (ReceiveOptions.kept). */
  async handle(message: Message, kept?: (outcome: StoreOutcome) => void, held = false): Promise<void> {
    // The answer travels in an object: returned bare, run() would wait for it in the intake queue.
    const { answered } = await this.intake.run(message.channelId, () => this.start(message, kept, held));
    await answered;
  }

  private async start(message: Message, kept: ((outcome: StoreOutcome) => void) | undefined, held: boolean): Promise<{ answered: Promise<void> }> {
    const { core, botId, typingIntervalMs, log, mentions, claim } = this.deps;
    const { decision, inbound } = await classify(message, { botId: botId() });
    const channel = message.channel;
    if (decision.kind === "ignore" || !channel.isSendable()) {
      log.trace({ message: message.id, reason: decision.kind === "ignore" ? decision.reason : "not_sendable" }, "message ignored");
      return { answered: Promise.resolve() };
    }
    const target = messageTarget(message, channel, typingIntervalMs, (err) => log.debug({ err: errText(err), channel: message.channelId }, "typing indicator failed"), mentions);
    if (decision.kind === "notice") {
      // Not stored, so not deduped by the core: every replica receives the message, one posts.
      if (!(await claim(noticeKey(message.id)))) return { answered: Promise.resolve() };
      // cairn reads text only: a textless message addressed to it gets a hint instead of a turn.
      const notice = target.send(NOTICES[decision.notice]).then(
        () => {},
        (err: unknown) => log.warn({ err: errText(err), channel: message.channelId }, "Discord post failed"),
      );
      return { answered: notice };
    }
    if (!inbound) return { answered: Promise.resolve() };
    // `@cairn why` (in a thread, or anywhere): what the last answer there drew on, told to the asker
    // alone. Discord cannot show a plain message's answer to one person, so it goes to their DMs.
    if (decision.trigger === "mention" && mentionCommand(inbound.text) === "why") return { answered: this.why(message, inbound) };
    const answered = core.receive(inbound, target, kept ? { kept, held } : {}).then((received) => {
      log.debug({ message: message.id, result: received.kind, ...("reason" in received ? { reason: received.reason } : {}) }, "message handled");
    });
    return { answered };
  }

  private async why(message: Message, inbound: Inbound): Promise<void> {
    const { core, log, claim } = this.deps;
    // Every replica receives the message; one answers.
    if (!(await claim(noticeKey(message.id)))) return;
    const dm = { send: async (text: string) => void (await message.author.send({ content: text, allowedMentions: { parse: [] } })) };
    const answered = await core.answer(inbound, { name: "why", args: [] }, { private: dm });
    log.info({ message: message.id, failed: answered.failed }, "why in a thread answered by DM");
  }
}
