/**
 * Where a guild channel id sits for channel knowledge: listening is turned on in a channel, and a
 * thread's messages belong to its parent (the thread id stays on them, for their link). A private
 * thread is not part of its channel's knowledge: who may read it is its own members, not the
 * channel's readers, so its messages are never kept (null).
 */
import { ChannelType, type Client } from "discord.js";

export interface ChannelPlace {
  /** The channel listening is about. */
  channel: string;
  /** The thread, when the id is one. */
  threadId: string | null;
}

export async function placeOf(client: Client, channelId: string): Promise<ChannelPlace | null> {
  // Threads and channels come with GUILD_CREATE, THREAD_CREATE and the thread list sync; a thread
  // discord.js has not seen (joined later, archived) is read once over REST.
  const channel = client.channels.cache.get(channelId) ?? (await client.channels.fetch(channelId).catch(() => null));
  if (!channel) return { channel: channelId, threadId: null };
  if (channel.type === ChannelType.PrivateThread) return null;
  if (channel.isThread()) return channel.parentId ? { channel: channel.parentId, threadId: channel.id } : null;
  return { channel: channelId, threadId: null };
}

/**
 * The channel `/cairn listen` run in `channelId` is about: the channel itself, or a thread's parent
 * (listening is per channel, and its threads' messages are kept with it). A private thread's parent
 * too: its own messages stay out either way.
 */
export async function listenedChannelOf(client: Client, channelId: string): Promise<string> {
  const channel = client.channels.cache.get(channelId) ?? (await client.channels.fetch(channelId).catch(() => null));
  return channel?.isThread() && channel.parentId ? channel.parentId : channelId;
}
