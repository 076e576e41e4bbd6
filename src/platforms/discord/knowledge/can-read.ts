/**
 * Who may search a listened channel's knowledge on Discord: whoever can read the channel now. On
 * Discord that is not a member list but a computation: the guild's roles, the member's roles and
 * the channel's permission overwrites (@everyone's, each role's, the member's own), with the owner
 * and Administrator seeing everything. discord.js's `permissionsFor` does exactly Discord's
 * computation; reading a channel's past needs both View Channel and Read Message History.
 *
 * Freshness, so that losing a role or leaving the guild hides the channel at the next search:
 * - The member (their roles) is read over REST at every search (GET /guilds/{g}/members/{u}), not
 *   cached: cairn does not ask for the privileged GuildMembers intent, so GUILD_MEMBER_UPDATE and
 *   GUILD_MEMBER_REMOVE do not reach it, and a cached member could be stale for hours. One small
 *   call per search; discord.js waits out a 429.
 * - Roles and overwrites come from discord.js's caches, which the Guilds intent keeps current
 *   (GUILD_ROLE_UPDATE, CHANNEL_UPDATE); a channel deleted is gone from the cache: not readable.
 * - Someone who is not a member (404 Unknown Member, Unknown User) reads nothing; so does anyone in
 *   a guild cairn is no longer in, and anyone in a DM "workspace".
 */
import { ChannelType, DiscordAPIError, PermissionFlagsBits, RESTJSONErrorCodes, type Client, type GuildMember } from "discord.js";

const READ = [PermissionFlagsBits.ViewChannel, PermissionFlagsBits.ReadMessageHistory];

export async function readableChannels(client: Client, guildId: string, userId: string, channels: readonly string[]): Promise<string[]> {
  if (channels.length === 0) return [];
  const guild = client.guilds.cache.get(guildId);
  if (!guild) return [];
  let member: GuildMember;
  try {
    member = await guild.members.fetch({ user: userId, force: true, cache: false });
  } catch (err) {
    if (notAMember(err)) return [];
    throw err;
  }
  return channels.filter((id) => {
    const channel = guild.channels.cache.get(id);
    // A private thread's readers are its members, not its parent's: never by permissions alone.
    if (!channel || channel.type === ChannelType.PrivateThread) return false;
    return channel.permissionsFor(member)?.has(READ) === true;
  });
}

function notAMember(err: unknown): boolean {
  return err instanceof DiscordAPIError && (err.code === RESTJSONErrorCodes.UnknownMember || err.code === RESTJSONErrorCodes.UnknownUser);
}
