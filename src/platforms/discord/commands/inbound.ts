/**
 * The Inbound an interaction runs as: a slash command, a click on a view's button, a modal's
 * submission. Always the person who interacted (the clicker, not whoever the view was first drawn
 * for), in the guild and channel where they did, so a button can do nothing its command would not
 * let that person do there.
 */
import type { BaseInteraction } from "discord.js";
import type { Inbound } from "../../../ground/types.ts";
import { dmWorkspace } from "../events.ts";

export const SLASH_COMMAND = "cairn";

/** An interaction that happened in a channel (every slash command, click and submission does). */
export type ChannelInteraction = BaseInteraction & { channelId: string };

export const inChannel = (interaction: BaseInteraction): interaction is ChannelInteraction => typeof interaction.channelId === "string" && interaction.channelId !== "";

/** The same place a message in that channel would resolve to; `text` is the command as typed. */
export function interactionInbound(interaction: ChannelInteraction, name: string, args: readonly string[] = []): Inbound {
  const user = interaction.user;
  const guildId = interaction.guildId;
  const channelId = interaction.channelId;
  return {
    platform: "discord",
    workspace: guildId ? { externalId: guildId, ...(interaction.guild ? { name: interaction.guild.name } : {}) } : { externalId: dmWorkspace(user.id) },
    author: {
      externalId: user.id,
      displayName: (interaction.inCachedGuild() ? interaction.member.displayName : null) ?? user.globalName ?? user.username,
      isBot: user.bot,
      roles: memberRoles(interaction),
    },
    channel: { externalId: channelId, isDm: !guildId },
    threadId: guildId && interaction.channel?.isThread() ? channelId : null,
    // Interactions are not messages; this id keeps them apart from message ids where they are stored.
    messageId: `interaction:${interaction.id}`,
    text: [`/${SLASH_COMMAND}`, name, ...args].join(" "),
    sentAt: interaction.createdAt,
  };
}

/** The member's role ids (for the core's role-based access rules); the member may be raw API data. */
function memberRoles(interaction: BaseInteraction): string[] {
  const member = interaction.member;
  if (!member) return [];
  return Array.isArray(member.roles) ? [...member.roles] : [...member.roles.cache.keys()].filter((id) => id !== interaction.guildId);
}
