/**
 * What kind of conversation a Discord channel id is, for `listen on`: cairn never listens in DMs or
 * group DMs. Everything in a guild (text, announcement, forum channels, threads) is a channel.
 * Read from the cache, or once over REST (a DM channel discord.js has not cached).
 */
import { ChannelType, type Client } from "discord.js";

export type ChannelKind = "channel" | "dm" | "group_dm";

export async function channelKind(client: Client, channelId: string): Promise<ChannelKind> {
  const channel = client.channels.cache.get(channelId) ?? (await client.channels.fetch(channelId));
  if (!channel) throw new Error(`Discord channel ${channelId} is not known`);
  return kindOf(channel.type);
}

export function kindOf(type: ChannelType): ChannelKind {
  switch (type) {
    case ChannelType.DM:
      return "dm";
    case ChannelType.GroupDM:
      return "group_dm";
    default:
      return "channel";
  }
}
