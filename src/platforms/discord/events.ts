/**
 * Which Discord messages cairn answers, and the Inbound each becomes.
 *
 * Rules (see docs/discord.md):
 * - Bots never trigger a turn: cairn's own messages (Discord echoes them back), other bots,
 *   webhooks. System messages (joins, pins, thread-created notices) are ignored too.
 * - DMs: every message is a turn. workspace = "@dm:<user id>" (see dmWorkspace), channel = the DM
 *   channel, one conversation per person.
 * - Guild channels: a turn when cairn is mentioned (its user or its managed role — Discord's
 *   autocomplete offers both) or when the message replies to one of cairn's messages. cairn
 *   answers in place, with a reply that references the message; the channel's main line is one
 *   conversation (threadId null), so a reply chain keeps its context.
 * - Threads: one conversation per thread (channel = threadId = the thread's id). A message in a
 *   thread that does not address cairn goes to the core as not addressed: the core answers it where
 *   it follows the thread (cairn was addressed there, posted there, or the thread was started from
 *   its message).
 * - No text: a message addressed to cairn with only attachments or stickers gets a short notice
 *   (cairn reads text only); a bare mention gets a hint. In a followed thread such messages are
 *   ignored: people share screenshots with each other there, and a notice each time is noise.
 * - Text with attachments: the text is answered, with a note naming the files cairn cannot open,
 *   so the model does not pretend to have read them.
 */
import { MessageReferenceType, MessageType, cleanContent, type Message } from "discord.js";
import type { Inbound } from "../../ground/types.ts";
import { messageLink } from "./link.ts";

/**
 * Discord DMs happen outside any guild. Each person's DMs are a workspace of their own: a shared
 * "@dm" workspace would let a team entry or skill made in one person's DM reach everyone who DMs
 * the bot, from any guild.
 */
export function dmWorkspace(userId: string): string {
  return `@dm:${userId}`;
}

export type Trigger = "dm" | "mention" | "reply" | "thread";
export type IgnoreReason = "bot" | "system" | "not_addressed" | "no_text_in_thread";
export type NoticeKind = "attachments_only" | "empty";

/** What the adapter knows about a message, reduced to what the decision needs. */
export interface MessageFacts {
  fromBot: boolean;
  system: boolean;
  isDm: boolean;
  inThread: boolean;
  mentionsBot: boolean;
  repliesToBot: boolean;
  /** cairn may be in this thread: the core decides, by the threads it follows. */
  followed: boolean;
  /** The text after the mention is stripped. */
  text: string;
  /** Attachments and stickers. */
  files: number;
}

export type Decision =
  | { kind: "ignore"; reason: IgnoreReason }
  | { kind: "notice"; trigger: Trigger; notice: NoticeKind }
  | { kind: "turn"; trigger: Trigger };

export const NOTICES: Record<NoticeKind, string> = {
  attachments_only:
    "I can only read text for now, so I can't open attachments or stickers. Paste the text you want me to look at, or tell me what it shows.",
  empty: "Hi! Ask me something after the mention (for example: `@cairn what did we decide about releases?`), or try `/cairn help`.",
};

export function triggerOf(f: MessageFacts): Trigger | null {
  if (f.isDm) return "dm";
  if (f.mentionsBot) return "mention";
  if (f.repliesToBot) return "reply";
  if (f.inThread && f.followed) return "thread";
  return null;
}

/** The pure decision: tested on its own, applied to every message. */
export function decide(f: MessageFacts): Decision {
  if (f.fromBot) return { kind: "ignore", reason: "bot" };
  if (f.system) return { kind: "ignore", reason: "system" };
  const trigger = triggerOf(f);
  if (!trigger) return { kind: "ignore", reason: "not_addressed" };
  if (f.text.trim() === "") {
    if (trigger === "thread") return { kind: "ignore", reason: "no_text_in_thread" };
    return { kind: "notice", trigger, notice: f.files > 0 ? "attachments_only" : "empty" };
  }
  return { kind: "turn", trigger };
}

/** Removes mentions of cairn (`<@id>`, `<@!id>`, its role `<@&id>`) and the gaps they leave. */
export function stripBotMention(content: string, botId: string, botRoleId: string | null): string {
  const ids = [botId, ...(botRoleId ? [botRoleId] : [])].join("|");
  return content
    .replace(new RegExp(`<@[!&]?(?:${ids})>`, "g"), " ")
    .replace(/[ \t]{2,}/g, " ")
    .replace(/^[ \t]*[,:]?[ \t]*/, "")
    .replace(/[ \t]+$/gm, "")
    .trim();
}

export function attachmentNote(names: readonly string[]): string {
  return names.length ? `\n[attached, not readable by cairn: ${names.join(", ")}]` : "";
}

export interface Classified {
  decision: Decision;
  /** Set for turns: the message as the core sees it. */
  inbound: Inbound | null;
}

export interface ClassifyContext {
  botId: string;
}

/** Reads the facts off a discord.js message, decides, and builds the Inbound for a turn. */
export async function classify(message: Message, ctx: ClassifyContext): Promise<Classified> {
  const { botId } = ctx;
  const author = message.author;
  const fromBot = author.bot || author.id === botId || message.webhookId !== null;
  // Only plain messages and replies are conversation; everything else is a system notice.
  const system = message.type !== MessageType.Default && message.type !== MessageType.Reply;
  if (fromBot || system) return { decision: decide({ ...EMPTY_FACTS, fromBot, system }), inbound: null };

  const guild = message.guild;
  const isDm = !message.inGuild();
  const inThread = message.channel.isThread();
  const botRoleId = guild?.roles.botRoleFor(botId)?.id ?? null;
  const mentionsBot = message.mentions.users.has(botId) || (botRoleId !== null && message.mentions.roles.has(botRoleId));
  const repliesToBot = !isDm && !mentionsBot && (await isReplyToBot(message, botId));
  const stripped = stripBotMention(message.content, botId, botRoleId);
  const files = [...message.attachments.values()].map((a) => a.name);
  const facts: MessageFacts = {
    fromBot,
    system,
    isDm,
    inThread,
    mentionsBot,
    repliesToBot,
    followed: false,
    text: stripped,
    files: files.length + message.stickers.size,
  };
  // Unaddressed in a thread: a turn candidate; the core answers it only where it follows the thread.
  if (!isDm && inThread && !mentionsBot && !repliesToBot) facts.followed = true;
  const decision = decide(facts);
  if (decision.kind !== "turn") return { decision, inbound: null };

  const channel = message.channel;
  const inbound: Inbound = {
    platform: "discord",
    workspace: guild ? { externalId: guild.id, name: guild.name } : { externalId: dmWorkspace(author.id) },
    author: {
      externalId: author.id,
      displayName: message.member?.displayName ?? author.globalName ?? author.username,
      isBot: author.bot,
      // For role-based access rules; @everyone (whose id is the guild's) is no rule.
      ...(message.member ? { roles: [...message.member.roles.cache.keys()].filter((id) => id !== message.guildId) } : {}),
    },
    channel: { externalId: message.channelId, isDm, ...("name" in channel && channel.name ? { name: channel.name } : {}) },
    threadId: inThread ? message.channelId : null,
    addressed: decision.trigger !== "thread",
    messageId: message.id,
    link: messageLink(message.guildId, message.channelId, message.id),
    // Other mentions become readable names (@Alice, #general) instead of <@123> for the model and search.
    text: cleanContent(stripped, channel) + attachmentNote([...files, ...message.stickers.map((s) => `sticker ${s.name}`)]),
    sentAt: message.createdAt,
  };
  return { decision, inbound };
}

/** A plain person's message with no trigger: the base that tests and the early exits extend. */
export const EMPTY_FACTS: MessageFacts = {
  fromBot: false,
  system: false,
  isDm: false,
  inThread: false,
  mentionsBot: false,
  repliesToBot: false,
  followed: false,
  text: "",
  files: 0,
};

/**
 * Whether the message replies to one of cairn's messages. Discord sends the replied-to message
 * along (`referenced_message`), so this is usually free; when it is missing (Discord did not
 * attempt to fetch it) the reference is fetched once. Forwards also carry a reference but are not replies.
 */
async function isReplyToBot(message: Message, botId: string): Promise<boolean> {
  const ref = message.reference;
  if (!ref?.messageId || ref.type === MessageReferenceType.Forward) return false;
  const replied = message.mentions.repliedUser;
  if (replied) return replied.id === botId;
  try {
    const target = await message.fetchReference();
    return target.author.id === botId;
  } catch {
    // Deleted, or no access: not a reply cairn can follow.
    return false;
  }
}
