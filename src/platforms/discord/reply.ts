/**
 * Posting a reply: split into Discord-sized parts, the first answering the person's message.
 *
 * - In guild channels and threads the first part is a Discord reply (message_reference) to the
 *   message that asked, so it is clear what is answered while others talk; `failIfNotExists:
 *   false` still posts it if that message was deleted meanwhile. In DMs parts are plain messages.
 * - Mentions never ping from model text: `parse: []` keeps "@everyone", roles and users inert;
 *   only the person replied to is notified.
 * - Parts are sent one by one, in order; a REST 429 is waited out by discord.js and the same part
 *   is retried, so it arrives once. If a part fails for good (no permission, channel gone), the
 *   parts already posted are still returned, so the core records what was delivered.
 */
import type { Message, MessageCreateOptions } from "discord.js";
import { chunkMessage } from "./chunk.ts";

export interface Delivered {
  /** Discord ids of the parts posted, in order. */
  ids: string[];
  /** The error that stopped delivery, if any. */
  error: unknown;
}

export async function postReply(target: Message, text: string): Promise<Delivered> {
  const parts = chunkMessage(text);
  const ids: string[] = [];
  const channel = target.channel;
  if (!channel.isSendable()) return { ids, error: new Error(`cannot send to channel ${target.channelId}`) };
  const reference = target.inGuild();
  try {
    for (const [i, content] of parts.entries()) {
      const base: MessageCreateOptions = { content, allowedMentions: { parse: [], repliedUser: true } };
      const sent = i === 0 && reference ? await target.reply({ ...base, failIfNotExists: false }) : await channel.send(base);
      ids.push(sent.id);
    }
    return { ids, error: null };
  } catch (error) {
    return { ids, error };
  }
}
