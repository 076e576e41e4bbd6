/**
 * Discord's message URL, the permalink the adapter gives with a person's message (`Inbound.link`)
 * and with each message channel knowledge keeps. A thread is a channel of its own, so a thread
 * message opens in its thread; a DM's "guild" is `@me`.
 */

/** `guild`: the guild id, or null for a DM. */
export function messageLink(guild: string | null, channelOrThread: string, messageId: string): string {
  return `https://discord.com/channels/${guild ?? "@me"}/${channelOrThread}/${messageId}`;
}
