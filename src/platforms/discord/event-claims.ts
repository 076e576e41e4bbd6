/**
 * Discord sends every dispatch to every gateway session of a bot, so each replica holding
 * DISCORD_TOKEN receives every interaction, reaction and message. What the adapter does on its own
 * for one (answer an interaction, post a notice, hand a reaction to the core) is claimed first
 * (`CorePort.claim`): the replica whose claim lands first acts, the others do nothing.
 *
 * A person's message is not claimed: the core stores it under a unique key and the replica that
 * stored it answers (its lease hands the turn to another replica if it dies). A claim there could
 * be taken by a replica that then dies before storing, and the message would go unanswered.
 */
import type { CorePort } from "../../ground/adapter.ts";
import type { FeedbackEvent } from "../../ground/types.ts";
import { errText, type Logger } from "../../ground/log.ts";

/**
 * A reaction has no id of its own: the same person adding the same emoji again later is a new
 * event. Within this window it is not: a reaction added, removed and added again within 10 s is
 * one event, which also absorbs the small differences between the replicas' clocks.
 */
export const REACTION_WINDOW_MS = 10_000;

export const interactionKey = (interactionId: string): string => `discord:interaction:${interactionId}`;

/** A notice the adapter posts for a message itself (attachments only, a bare mention). */
export const noticeKey = (messageId: string): string => `discord:notice:${messageId}`;

export const reactionKey = (event: Pick<FeedbackEvent, "targetMessageId" | "reactor" | "emoji" | "action">): string =>
  `discord:reaction:${event.targetMessageId}:${event.reactor.externalId}:${event.emoji}:${event.action}`;

export type Claim = (key: string, windowMs?: number) => Promise<boolean>;

/**
 * Claims through the core. When the database cannot answer, this replica acts anyway: an answer
 * twice is better than none.
 */
export function claimer(core: Pick<CorePort, "claim">, log: Logger): Claim {
  return async (key, windowMs) => {
    try {
      if (await core.claim(key, windowMs)) return true;
      log.debug({ key }, "discord event taken by another replica");
      return false;
    } catch (err) {
      log.warn({ err: errText(err), key }, "could not claim a discord event; acting on it anyway");
      return true;
    }
  };
}
