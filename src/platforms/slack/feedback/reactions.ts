/**
 * `reaction_added` / `reaction_removed` to the core's FeedbackEvent. Only reactions on messages the
 * bot posted are passed on (Slack says whose message it was in `item_user`); the core then decides
 * whether the message is one of its replies. Slack names the emoji ("+1::skin-tone-3"); the core
 * takes the character without skin tone ("👍", emoji.ts).
 */
import { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import type { FeedbackEvent } from "../../../ground/types.ts";
import type { Logger } from "../../../ground/log.ts";
import { EnvelopeSchema, type BotIdentity } from "../events.ts";
import type { NameCache } from "../names.ts";
import { slackEmoji } from "../emoji.ts";

export const ReactionEventSchema = z.looseObject({
  type: z.enum(["reaction_added", "reaction_removed"]),
  user: z.string().min(1),
  reaction: z.string().min(1),
  item_user: z.string().optional(),
  item: z.looseObject({ type: z.string(), channel: z.string().optional(), ts: z.string().optional() }),
  event_ts: z.string().regex(/^\d+(\.\d+)?$/),
});

export type ReactionResult =
  | { kind: "feedback"; event: FeedbackEvent }
  | { kind: "drop"; reason: "malformed" | "not_a_message" | "not_on_bot_message"; detail?: string; target?: string };

export function toFeedback(event: unknown, body: unknown, bot: BotIdentity): ReactionResult {
  const e = ReactionEventSchema.safeParse(event);
  const b = EnvelopeSchema.safeParse(body);
  if (!e.success) return { kind: "drop", reason: "malformed", detail: z.prettifyError(e.error) };
  if (!b.success) return { kind: "drop", reason: "malformed", detail: z.prettifyError(b.error) };
  const { item } = e.data;
  if (item.type !== "message" || !item.channel || !item.ts) return { kind: "drop", reason: "not_a_message" };
  if (e.data.item_user !== undefined && e.data.item_user !== bot.userId) return { kind: "drop", reason: "not_on_bot_message", target: item.ts };
  return {
    kind: "feedback",
    event: {
      platform: "slack",
      workspace: { externalId: b.data.team_id },
      reactor: { externalId: e.data.user },
      channel: { externalId: item.channel, isDm: item.channel.startsWith("D") },
      targetMessageId: item.ts,
      emoji: slackEmoji(e.data.reaction),
      action: e.data.type === "reaction_added" ? "added" : "removed",
      at: new Date(Number(e.data.event_ts) * 1000),
    },
  };
}

export interface ReactionDeps {
  core: CorePort;
  names: NameCache;
  bot: BotIdentity;
  log: Logger;
}

/** Delivers a reaction on one of the bot's messages to the core as feedback, with who reacted. */
export async function onReactionEvent(deps: ReactionDeps, event: unknown, body: unknown, meta: { eventType: string; eventId?: string | undefined }): Promise<void> {
  const r = toFeedback(event, body, deps.bot);
  if (r.kind === "drop") {
    const { kind: _kind, ...fields } = { ...meta, ...r };
    if (r.reason === "malformed") deps.log.warn(fields, "malformed reaction event ignored");
    else deps.log.debug(fields, "reaction ignored");
    return;
  }
  const reactor = await deps.names.get(r.event.reactor.externalId);
  const feedback: FeedbackEvent = {
    ...r.event,
    reactor: { ...r.event.reactor, ...(reactor.displayName ? { displayName: reactor.displayName } : {}), isBot: reactor.isBot },
  };
  const result = await deps.core.feedback(feedback);
  const where = { ...meta, channel: feedback.channel.externalId, target: feedback.targetMessageId, emoji: feedback.emoji, action: feedback.action };
  if (result.kind === "recorded") deps.log.info({ ...where, reply: result.replyMessageId, job: result.jobId }, "reaction recorded as feedback");
  else deps.log.debug({ ...where, reason: result.reason }, "reaction ignored");
}
