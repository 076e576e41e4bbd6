/**
 * Slack events to the core's channel events (`CorePort.observe`): what channel knowledge keeps of
 * the channels cairn listens in. Every person's message in a channel goes (unaddressed posts,
 * thread replies, and mentions that are also turns), and so do edits (`message_changed`: the new
 * text), deletions (`message_deleted`) and people joining or leaving (`member_joined_channel`,
 * `member_left_channel`). The core keeps those of listened channels and ignores the rest.
 *
 * Beside the turn, never in its way: turn.ts decides and answers as before, this runs as its own
 * task (the envelope's ack waits for the turn's storing, not for this), and a failure here is
 * logged, never thrown back into Bolt. DMs (`im`) and group DMs (`mpim`) are never sent: cairn
 * does not listen in them.
 *
 * One channel's events reach the core in the order they arrived (`order`): a message, its edit and
 * its deletion, quick after each other, must not overtake each other while an author's name is
 * looked up.
 */
import { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import type { KeyedQueue } from "../../../ground/keyed-queue.ts";
import type { ChannelEvent } from "../../../ground/channel-events.ts";
import type { Logger } from "../../../ground/log.ts";
import { channelMessage, sayer, SlackMessageSchema, type MessagePlace, type PersonLookup, type SlackMessageObject } from "./channel-message.ts";
import { slackErrorCode } from "../errors.ts";
import { EnvelopeSchema, messageText, TS, type BotIdentity } from "../events.ts";

const Where = { channel: z.string().min(1), channel_type: z.string().optional() };

const PostSchema = SlackMessageSchema.extend({ type: z.enum(["message", "app_mention"]), ...Where });

const ChangedSchema = z.looseObject({ type: z.literal("message"), subtype: z.literal("message_changed"), ...Where, message: SlackMessageSchema });

const DeletedSchema = z.looseObject({ type: z.literal("message"), subtype: z.literal("message_deleted"), ...Where, deleted_ts: z.string().regex(TS) });

/** `channel_type` here is "C" (public) or "G" (private); there are no member events for DMs. */
const MemberSchema = z.looseObject({ type: z.enum(["member_joined_channel", "member_left_channel"]), user: z.string().min(1), channel: z.string().min(1) });

/** Conversations cairn never listens in: direct messages, group DMs, the App Home's Messages tab. */
const NOT_CHANNELS = new Set(["im", "mpim", "app_home"]);

/** What one Slack event says happened in a channel; the message still needs its author's name. */
export type Observed = { kind: "message"; place: MessagePlace; message: SlackMessageObject } | { kind: "event"; event: Exclude<ChannelEvent, { kind: "message" }> };

const inChannel = (e: { channel: string; channel_type?: string | undefined }): boolean =>
  // app_mention carries no channel_type; a DM's id starts with D.
  e.channel_type !== undefined ? !NOT_CHANNELS.has(e.channel_type) : !e.channel.startsWith("D");

/** The event as channel knowledge sees it; null when it is nothing to it (a DM, a bot, a join message...). */
export function observed(event: unknown, body: unknown, bot: BotIdentity): Observed | null {
  const envelope = EnvelopeSchema.safeParse(body);
  if (!envelope.success) return null;
  const team = envelope.data.team_id;
  const place = (channel: string) => ({ platform: "slack" as const, workspace: { externalId: team }, channel });

  const member = MemberSchema.safeParse(event);
  if (member.success) {
    const m = member.data;
    // cairn joining or leaving is no reader coming or going (channel-members.ts leaves it out too).
    if (m.user === bot.userId) return null;
    return { kind: "event", event: { kind: "member", ...place(m.channel), user: m.user, joined: m.type === "member_joined_channel" } };
  }
  const changed = ChangedSchema.safeParse(event);
  if (changed.success) {
    const c = changed.data;
    if (!inChannel(c)) return null;
    // A thread's first message deleted while its replies stay becomes a tombstone ("This message was deleted.").
    if (c.message.subtype === "tombstone") return { kind: "event", event: { kind: "delete", ...place(c.channel), messageId: c.message.ts } };
    if (!sayer(c.message, bot)) return null;
    return { kind: "event", event: { kind: "edit", ...place(c.channel), messageId: c.message.ts, text: messageText(c.message.text ?? "", c.message.files, bot) } };
  }
  const deleted = DeletedSchema.safeParse(event);
  if (deleted.success) {
    const d = deleted.data;
    return inChannel(d) ? { kind: "event", event: { kind: "delete", ...place(d.channel), messageId: d.deleted_ts } } : null;
  }
  const post = PostSchema.safeParse(event);
  if (!post.success || !inChannel(post.data) || !sayer(post.data, bot)) return null;
  return { kind: "message", place: { workspace: team, channel: post.data.channel, bot }, message: post.data };
}

export interface ObserveDeps {
  core: CorePort;
  names: PersonLookup;
  bot: BotIdentity;
  log: Logger;
  /** Per channel, events in arrival order. */
  order: KeyedQueue;
}

/** Hands what the event says to `core.observe`. Never throws. */
export async function observeEvent(deps: ObserveDeps, event: unknown, body: unknown, meta: { eventType: string; eventId?: string | undefined }): Promise<void> {
  let what: Observed | null;
  try {
    what = observed(event, body, deps.bot);
  } catch (err) {
    deps.log.warn({ ...meta, err }, "could not read a channel event");
    return;
  }
  if (!what) return;
  const channel = what.kind === "message" ? what.place.channel : what.event.channel;
  const team = what.kind === "message" ? what.place.workspace : what.event.workspace.externalId;
  const id = what.kind === "message" ? what.message.ts : what.event.kind === "member" ? what.event.user : what.event.messageId;
  const fields = { ...meta, team, channel, kind: what.kind === "message" ? "message" : what.event.kind, id };
  try {
    await deps.order.run(`${team}:${channel}`, async () => {
      const channelEvent = what.kind === "event" ? what.event : await toMessageEvent(what, deps.names);
      if (channelEvent) await deps.core.observe(channelEvent);
    });
    deps.log.debug(fields, "channel event observed");
  } catch (err) {
    deps.log.error({ ...fields, error: slackErrorCode(err) }, "could not pass a channel event on");
  }
}

async function toMessageEvent(what: Extract<Observed, { kind: "message" }>, names: PersonLookup): Promise<ChannelEvent | null> {
  const message = await channelMessage(what.message, what.place, names);
  return message ? { kind: "message", message } : null;
}
