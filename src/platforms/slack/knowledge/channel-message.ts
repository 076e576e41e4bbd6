/**
 * One Slack message object (as `conversations.history` / `.replies` return it, and as a message
 * event carries it) to the core's `ChannelMessage`: what channel knowledge keeps. Live events
 * (observe.ts) and the backfill (history.ts) share it, so a message read back from history and the
 * same message seen live are kept alike (same id, text, thread and link).
 *
 * Only people saying something is kept: a plain message, a reply also sent to the channel
 * (`thread_broadcast`), a shared file with its comment, a `/me` line. Joins, topic changes, bot
 * posts and cairn's own are left out here (the core would drop bots anyway; not sending them saves
 * a lookup per post).
 */
import { z } from "zod";
import type { ChannelMessage } from "../../../ground/channel-events.ts";
import { messageText, TS, type BotIdentity } from "../events.ts";
import type { SlackPerson } from "../names.ts";
import { permalink } from "../permalink.ts";

export const SlackMessageSchema = z.looseObject({
  ts: z.string().regex(TS),
  subtype: z.string().optional(),
  user: z.string().min(1).optional(),
  bot_id: z.string().optional(),
  bot_profile: z.unknown().optional(),
  text: z.string().optional(),
  thread_ts: z.string().regex(TS).optional(),
  reply_count: z.number().int().nonnegative().optional(),
  files: z.array(z.looseObject({ name: z.string().optional(), title: z.string().optional() })).optional(),
});
export type SlackMessageObject = z.infer<typeof SlackMessageSchema>;

/** Subtypes that are a person saying something; every other one (joins, topics, bots...) is not kept. */
const SAID = new Set([undefined, "thread_broadcast", "file_share", "me_message"]);

/** The part of NameCache this needs: a person's display name, and whether the account is a bot. */
export interface PersonLookup {
  get(user: string): Promise<SlackPerson>;
}

export interface MessagePlace {
  /** The workspace (team id) the message belongs to. */
  workspace: string;
  channel: string;
  bot: BotIdentity;
}

/** The person who said it, or null when the message is not a person's (a subtype, a bot, cairn). */
export function sayer(m: SlackMessageObject, bot: BotIdentity): string | null {
  if (!SAID.has(m.subtype)) return null;
  if (m.bot_id !== undefined || m.bot_profile !== undefined || !m.user || m.user === bot.userId) return null;
  return m.user;
}

/** A reply's thread: the thread_ts of a message that is not the thread's first one, else null. */
export function threadOf(m: Pick<SlackMessageObject, "ts" | "thread_ts">): string | null {
  return m.thread_ts !== undefined && m.thread_ts !== m.ts ? m.thread_ts : null;
}

/** The message as channel knowledge, or null when it is nobody's words (see `sayer`) or has no text. */
export async function channelMessage(m: SlackMessageObject, place: MessagePlace, names: PersonLookup): Promise<ChannelMessage | null> {
  const user = sayer(m, place.bot);
  if (!user) return null;
  const text = messageText(m.text ?? "", m.files, place.bot);
  if (!text.trim()) return null;
  // A user account that is a bot (some integrations post without bot_id) is sent marked: the core drops it.
  const person = await names.get(user);
  const threadId = threadOf(m);
  return {
    platform: "slack",
    workspace: { externalId: place.workspace },
    channel: place.channel,
    messageId: m.ts,
    threadId,
    author: { externalId: user, ...(person.displayName ? { displayName: person.displayName } : {}), ...(person.isBot ? { isBot: true } : {}) },
    text,
    sentAt: new Date(Number(m.ts) * 1000),
    link: permalink(place.bot.url, place.channel, m.ts, threadId),
  };
}
