/**
 * A click on the feedback buttons under an answer (a `block_actions` interaction, action_id
 * `cairn_feedback`) to the core's FeedbackEvent, like a reaction: 👍 or 👎 with the button's fixed
 * meaning as its `signal` (counted whatever the emoji settings say), always "added" (the buttons
 * have no un-click). The core decides whether the message is one of its replies and ignores bots'
 * clicks.
 */
import { z } from "zod";
import type { FeedbackEvent } from "../../../ground/types.ts";
import { FEEDBACK_ACTION_ID, FEEDBACK_VALUES } from "./buttons.ts";
import type { BotIdentity } from "../events.ts";
import type { ReactionDeps } from "./reactions.ts";

const SlackTs = z.string().regex(/^\d+(\.\d+)?$/);

const ActionSchema = z.looseObject({
  action_id: z.string(),
  value: z.string().optional(),
  action_ts: SlackTs.optional(),
});

/** The fields of a block_actions payload a click needs; Slack sends many more. */
export const FeedbackActionSchema = z.looseObject({
  type: z.literal("block_actions"),
  user: z.looseObject({ id: z.string().min(1), team_id: z.string().optional() }),
  // Null for an org-wide install; the clicker's team_id stands in.
  team: z.looseObject({ id: z.string().min(1) }).nullish(),
  channel: z.looseObject({ id: z.string().min(1) }).nullish(),
  container: z.looseObject({ channel_id: z.string().optional(), message_ts: SlackTs.optional() }).nullish(),
  message: z.looseObject({ ts: SlackTs, user: z.string().optional() }).nullish(),
  actions: z.array(ActionSchema).min(1),
});

export type ClickResult =
  | { kind: "feedback"; event: FeedbackEvent }
  | { kind: "drop"; reason: "malformed" | "not_on_bot_message"; detail?: string; target?: string };

const CLICKED = { [FEEDBACK_VALUES.positive]: { emoji: "👍", signal: "positive" }, [FEEDBACK_VALUES.negative]: { emoji: "👎", signal: "negative" } } as const;

export function toClickFeedback(body: unknown, bot: BotIdentity, now: () => Date = () => new Date()): ClickResult {
  const parsed = FeedbackActionSchema.safeParse(body);
  if (!parsed.success) return { kind: "drop", reason: "malformed", detail: z.prettifyError(parsed.error) };
  const b = parsed.data;
  const action = b.actions.find((a) => a.action_id === FEEDBACK_ACTION_ID);
  const clicked = action?.value === FEEDBACK_VALUES.positive || action?.value === FEEDBACK_VALUES.negative ? CLICKED[action.value] : undefined;
  const channel = b.channel?.id ?? b.container?.channel_id;
  const ts = b.message?.ts ?? b.container?.message_ts;
  const workspace = b.team?.id ?? b.user.team_id;
  if (!action || !clicked || !channel || !ts || !workspace) {
    return { kind: "drop", reason: "malformed", detail: `missing ${!action ? "action" : !clicked ? "a known value" : !channel ? "channel" : !ts ? "message ts" : "team"}` };
  }
  // Buttons only exist on cairn's messages; a payload that says otherwise is not feedback on it.
  if (b.message?.user !== undefined && b.message.user !== bot.userId) return { kind: "drop", reason: "not_on_bot_message", target: ts };
  return {
    kind: "feedback",
    event: {
      platform: "slack",
      workspace: { externalId: workspace },
      reactor: { externalId: b.user.id },
      channel: { externalId: channel, isDm: channel.startsWith("D") },
      targetMessageId: ts,
      emoji: clicked.emoji,
      signal: clicked.signal,
      action: "added",
      // action_ts tells two clicks apart (the core dedupes on the time) and is the same on a redelivery.
      at: action.action_ts ? new Date(Number(action.action_ts) * 1000) : now(),
    },
  };
}

/** Delivers a click on the feedback buttons to the core, with who clicked. */
export async function onFeedbackAction(deps: ReactionDeps, body: unknown): Promise<void> {
  const r = toClickFeedback(body, deps.bot);
  if (r.kind === "drop") {
    const { kind: _kind, ...fields } = r;
    if (r.reason === "malformed") deps.log.warn(fields, "malformed feedback click ignored");
    else deps.log.debug(fields, "feedback click ignored");
    return;
  }
  const clicker = await deps.names.get(r.event.reactor.externalId);
  const feedback: FeedbackEvent = {
    ...r.event,
    reactor: { ...r.event.reactor, ...(clicker.displayName ? { displayName: clicker.displayName } : {}), isBot: clicker.isBot },
  };
  const result = await deps.core.feedback(feedback);
  const where = { channel: feedback.channel.externalId, target: feedback.targetMessageId, emoji: feedback.emoji };
  if (result.kind === "recorded") deps.log.info({ ...where, reply: result.replyMessageId, job: result.jobId }, "feedback click recorded");
  else deps.log.debug({ ...where, reason: result.reason }, "feedback click ignored");
}
