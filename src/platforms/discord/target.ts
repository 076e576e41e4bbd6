/**
 * Where a Discord reply or post lands, as the core's `ReplyTarget`.
 *
 * - In guild channels and threads the first part of a reply is a Discord reply (message_reference)
 *   to the message that asked, so it is clear what is answered while others talk;
 *   `failIfNotExists: false` still posts it if that message was deleted meanwhile. In DMs parts are
 *   plain messages.
 * - Mentions never ping from model text: `parse: []` keeps "@everyone", roles and users inert; only
 *   the person replied to is notified (unless an admin lets mass mentions through: `allowedMentions`).
 * - A REST 429 is waited out by discord.js and the same call retried, so a part arrives once.
 * - While cairn works, the channel shows "cairn is typing…".
 * - Every part of a reply carries an idempotency key (`nonce` with `enforce_nonce`), made of the
 *   person's message id and the part's number: Discord returns the message cairn already made
 *   with it in the last few minutes instead of making another. So a part is never posted twice,
 *   neither by discord.js retrying a request whose answer was lost nor by crash recovery posting a
 *   reply a killed process had posted (or begun, as a draft: then the draft is edited to the part).
 */
import type { Message, MessageMentionOptions, SendableChannels } from "discord.js";
import type { ReplyTarget } from "../../ground/adapter.ts";
import { richEmbeds } from "./rich.ts";
import { postComponents } from "./views/post-buttons.ts";
import { startTyping, type Typing } from "./typing.ts";

/**
 * What cairn's posts may ping: the person replied to; with `massMentions` (CAIRN_ALLOW_MASS_MENTIONS,
 * an admin's choice) also @everyone, @here and roles. Users named in the text never are.
 */
export function allowedMentions(massMentions: boolean): MessageMentionOptions {
  return { parse: massMentions ? ["everyone", "roles"] : [], repliedUser: true };
}

const NO_PINGS = allowedMentions(false);

/** Discord's longest nonce. */
const NONCE_MAX = 25;

/**
 * The idempotency keys of the parts of one reply: `<person's message id>.<part>`, in posting
 * order. None for an id that would not fit (Discord's ids are snowflakes of up to 20 digits).
 */
export function partNonces(answers: string): () => string | undefined {
  let part = 0;
  return () => {
    const nonce = `${answers}.${part++}`;
    return nonce.length <= NONCE_MAX ? nonce : undefined;
  };
}

/**
 * A part sent under a nonce may come back as the message an earlier process made with it: a draft,
 * or a part of another length. It is made to say `content`; one that cannot be edited any more
 * (deleted meanwhile) is replaced by a new post without the nonce.
 */
async function settled(sent: Message, content: string, resend: () => Promise<Message>): Promise<string> {
  // Trimmed: Discord stores a message's text without its surrounding whitespace.
  if (sent.content.trim() === content.trim()) return sent.id;
  try {
    await sent.edit({ content });
    return sent.id;
  } catch {
    return (await resend()).id;
  }
}

/**
 * A channel, thread or DM channel: send, edit and delete cairn's own parts there. The core's rich
 * posts (a report) go as one message of embeds, or not at all when they do not fit (rich.ts).
 */
export function channelTarget(channel: SendableChannels, mentions: MessageMentionOptions = NO_PINGS, nonces?: () => string | undefined): ReplyTarget {
  return {
    channelId: channel.id,
    send: async (content) => {
      const nonce = nonces?.();
      const plain = () => channel.send({ content, allowedMentions: mentions });
      if (nonce === undefined) return (await plain()).id;
      return settled(await channel.send({ content, allowedMentions: mentions, nonce, enforceNonce: true }), content, plain);
    },
    sendRich: async (post) => {
      const embeds = richEmbeds(post);
      // Its sections' buttons as components under the embeds (views/post-buttons.ts).
      return embeds ? (await channel.send({ embeds, components: postComponents(post), allowedMentions: mentions })).id : null;
    },
    edit: async (id, content) => void (await channel.messages.edit(id, { content, allowedMentions: mentions })),
    remove: async (id) => void (await channel.messages.delete(id)),
  };
}

/**
 * The reply to one person's message. "cairn is typing…" shows until cairn's first part is on
 * screen (a status, a draft or the answer): after that the text itself says cairn is at work, and a
 * typing call landing after the answer would show cairn typing again for 10 s.
 */
export function messageTarget(
  message: Message,
  channel: SendableChannels,
  typingIntervalMs: number,
  onTypingError: (err: unknown) => void,
  mentions: MessageMentionOptions = NO_PINGS,
): ReplyTarget {
  const nonces = partNonces(message.id);
  const base = channelTarget(channel, mentions, nonces);
  let referenced = !message.inGuild();
  let typing: Typing | null = null;
  return {
    ...base,
    send: async (content) => {
      typing?.stop();
      if (referenced) return base.send(content);
      referenced = true;
      const nonce = nonces();
      const reply = (keyed: boolean) =>
        message.reply({ content, allowedMentions: mentions, failIfNotExists: false, ...(keyed && nonce !== undefined ? { nonce, enforceNonce: true } : {}) });
      return settled(await reply(true), content, () => reply(false));
    },
    working: async () => {
      typing = startTyping(channel, typingIntervalMs, onTypingError);
      return async () => typing?.stop();
    },
  };
}
