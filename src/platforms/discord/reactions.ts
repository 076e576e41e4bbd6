/**
 * Reactions → core feedback events, as the Slack adapter delivers them.
 *
 * Every reaction add/remove the bot sees is passed on, except cairn's own; the core keeps only
 * those on messages it recorded as deliveries of its replies (one indexed lookup), so the adapter
 * never fetches a reacted-to message just to see who wrote it.
 *
 * Uncached messages: with Partials.Message and Partials.Reaction discord.js emits the event with
 * a partial message that still carries the ids the core needs (message, channel, guild). A partial
 * reactor (a removal, or a DM) is fetched once so a bot's reaction is recognised as one.
 *
 * One gap discord.js leaves: a reaction in a DM channel it has not cached (after a restart) is
 * dropped, because the event carries no channel type. `rawDmReaction` reads those from the raw
 * gateway packet (validated with zod) so they reach the core too.
 */
import type { MessageReaction, PartialMessageReaction, PartialUser, User } from "discord.js";
import { z } from "zod";
import type { FeedbackEvent } from "../../ground/types.ts";
import { bareEmoji } from "../../ground/emoji.ts";
import { dmWorkspace } from "./events.ts";

export type ReactionAction = FeedbackEvent["action"];

/**
 * The emoji as the core takes it: Discord sends the character, with any skin tone or variation
 * selector ("👎🏽"), which the core reads without ("👎"); a custom emoji by its name (else its id).
 */
function emojiOf(emoji: { name: string | null; id: string | null }): string | null {
  const e = emoji.name ? bareEmoji(emoji.name) : emoji.id;
  return e || null;
}

export async function feedbackFromReaction(
  reaction: MessageReaction | PartialMessageReaction,
  user: User | PartialUser,
  action: ReactionAction,
  botId: string,
  at: Date = new Date(),
): Promise<FeedbackEvent | null> {
  if (user.id === botId) return null;
  const emoji = emojiOf(reaction.emoji);
  if (!emoji) return null;
  const reactor = user.partial ? await user.fetch().catch(() => null) : user;
  const message = reaction.message;
  return {
    platform: "discord",
    // In a DM only the person and cairn can react, so the DM's workspace is the reactor's.
    workspace: { externalId: message.guildId ?? dmWorkspace(user.id) },
    reactor: {
      externalId: user.id,
      ...(reactor ? { displayName: reactor.globalName ?? reactor.username, isBot: reactor.bot } : {}),
    },
    channel: { externalId: message.channelId, isDm: message.guildId === null },
    targetMessageId: message.id,
    emoji,
    action,
    at,
  };
}

const RawReactionPacket = z.object({
  t: z.enum(["MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE"]),
  d: z.looseObject({
    user_id: z.string(),
    channel_id: z.string(),
    message_id: z.string(),
    guild_id: z.string().optional(),
    emoji: z.looseObject({ id: z.string().nullable(), name: z.string().nullable() }),
  }),
});

/**
 * The feedback event for a raw DM reaction packet, when discord.js would drop it (its DM channel
 * is not cached); null for anything else, which the discord.js events handle.
 */
export function rawDmReaction(packet: unknown, botId: string, isChannelCached: (id: string) => boolean, at: Date = new Date()): FeedbackEvent | null {
  const parsed = RawReactionPacket.safeParse(packet);
  if (!parsed.success) return null;
  const { t, d } = parsed.data;
  if (d.guild_id !== undefined || isChannelCached(d.channel_id) || d.user_id === botId) return null;
  const emoji = emojiOf(d.emoji);
  if (!emoji) return null;
  return {
    platform: "discord",
    workspace: { externalId: dmWorkspace(d.user_id) },
    // Bots cannot DM each other: the other side of a DM with cairn is a person.
    reactor: { externalId: d.user_id, isBot: false },
    channel: { externalId: d.channel_id, isDm: true },
    targetMessageId: d.message_id,
    emoji,
    action: t === "MESSAGE_REACTION_ADD" ? "added" : "removed",
    at,
  };
}
