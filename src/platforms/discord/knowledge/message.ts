/**
 * One Discord message as channel knowledge (a `ChannelMessage`): the same mapping for a message
 * seen live on the gateway and one read back from a channel's history.
 *
 * - Only what people said: plain messages and replies. System messages (joins, pins, a thread's
 *   starter notice, boosts) are left out; bots and webhooks are kept as `isBot` (the core drops them).
 * - A thread message belongs to the thread's parent channel, the channel listening is turned on in
 *   (`channel`), with its thread as `threadId`; its link opens it in the thread.
 * - The text reads as Discord shows it: `<@id>` becomes @name, `<@&id>` @role, `<#id>` #channel,
 *   `<:wave:123>` :wave:, so a search for a person's or channel's name finds it.
 */
import type { ChannelMessage } from "../../../ground/channel-events.ts";
import type { WireMessage } from "./wire.ts";
import { messageLink } from "../link.ts";

/** Names of roles and channels (the client's caches); undefined when unknown. */
export interface Names {
  role(id: string): string | undefined;
  channel(id: string): string | undefined;
}

export const NO_NAMES: Names = { role: () => undefined, channel: () => undefined };

/** Where a message sits as channel knowledge: the listened channel, and the thread inside it if any. */
export interface KnowledgePlace {
  guild: string;
  /** The channel listening is about (a thread's parent). */
  channel: string;
  /** The thread the message is in; null in the channel itself. */
  threadId: string | null;
}

/** DEFAULT and REPLY: what people write. Every other type is a notice Discord makes. */
export const isConversation = (type: number): boolean => type === 0 || type === 19;

type Mentioned = WireMessage["mentions"][number];

const nameOf = (u: Pick<Mentioned, "username" | "global_name"> & { member?: { nick?: string | null | undefined } | undefined }): string =>
  u.member?.nick ?? u.global_name ?? u.username;

/** The text with Discord's markup for mentions and custom emoji turned into names. */
export function readableText(content: string, mentions: readonly Mentioned[], names: Names): string {
  const users = new Map(mentions.map((u) => [u.id, nameOf(u)]));
  return content
    .replace(/<@!?(\d+)>/g, (all, id: string) => (users.has(id) ? `@${users.get(id)}` : all))
    .replace(/<@&(\d+)>/g, (all, id: string) => {
      const name = names.role(id);
      return name ? `@${name}` : all;
    })
    .replace(/<#(\d+)>/g, (all, id: string) => {
      const name = names.channel(id);
      return name ? `#${name}` : all;
    })
    .replace(/<a?:(\w+):\d+>/g, ":$1:");
}

/** The message as knowledge, or null for a system notice (nothing anyone said). */
export function channelMessage(m: WireMessage, place: KnowledgePlace, names: Names): ChannelMessage | null {
  if (!isConversation(m.type)) return null;
  const sentAt = new Date(m.timestamp);
  if (Number.isNaN(sentAt.getTime())) return null;
  return {
    platform: "discord",
    workspace: { externalId: place.guild },
    channel: place.channel,
    messageId: m.id,
    threadId: place.threadId,
    author: { externalId: m.author.id, displayName: nameOf({ ...m.author, member: m.member }), isBot: m.author.bot === true || m.webhook_id !== undefined },
    text: readableText(m.content, m.mentions, names),
    sentAt,
    link: messageLink(place.guild, place.threadId ?? place.channel, m.id),
  };
}
