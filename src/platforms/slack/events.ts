/**
 * Slack message events (`message`, `app_mention`) to what cairn does with them: answer (a DM, a
 * mention, a reply in a thread cairn may follow) or drop, with the reason.
 *
 * Both event kinds Slack sends for one post map to the same conversation (channel + thread ts) and
 * the same message id (the post's ts), so the core's (conversation, message id) key makes the pair
 * and every retry land once.
 */
import { z } from "zod";
import type { Inbound } from "../../ground/types.ts";
import { FALLBACK_WORKSPACE_URL, permalink } from "./permalink.ts";

/** A Slack timestamp: a message's id in its channel ("1700000000.000100"). */
export const TS = /^\d+\.\d+$/;

export const MessageEventSchema = z.looseObject({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  user: z.string().min(1).optional(),
  bot_id: z.string().optional(),
  bot_profile: z.unknown().optional(),
  text: z.string().optional(),
  ts: z.string().regex(TS),
  thread_ts: z.string().regex(TS).optional(),
  edited: z.unknown().optional(),
  files: z.array(z.looseObject({ name: z.string().optional(), title: z.string().optional() })).optional(),
});

/** The event_callback around an event: the workspace is the team the app is installed in. */
export const EnvelopeSchema = z.looseObject({
  team_id: z.string().min(1),
  event_id: z.string().optional(),
});

/** Subtypes that are a person saying something; every other one (edits, deletions, joins...) is not a turn. */
const HANDLED_SUBTYPES = new Set([undefined, "thread_broadcast", "file_share"]);

export interface BotIdentity {
  userId: string;
  botId: string;
  name: string;
  teamId: string;
  teamName?: string;
  /** The workspace's URL (auth.test's `url`, "https://acme.slack.com/"): permalinks are built on it (permalink.ts). */
  url?: string;
}

export interface SlackMessage {
  teamId: string;
  channel: string;
  isDm: boolean;
  user: string;
  /** The post's ts: its message id everywhere. */
  ts: string;
  /** The thread the conversation lives in: null in DMs, else `thread_ts ?? ts`. */
  threadId: string | null;
  /** Where the answer goes: channel posts always in their thread; DMs only if the post was in one. */
  replyThreadTs: string | undefined;
  /** A reply inside a thread (not a top-level post): entering it may need the earlier messages. */
  inThread: boolean;
  text: string;
  sentAt: Date;
}

export type DropReason = "malformed" | "bot" | "self" | "subtype" | "edit" | "no_user" | "empty" | "not_addressed";

export type Classification =
  | { kind: "drop"; reason: DropReason; detail?: string; channel?: string; ts?: string }
  /** dm: every DM is a turn; mention: cairn was addressed; thread_reply: a turn if cairn follows the thread. */
  | { kind: "dm" | "mention" | "thread_reply"; message: SlackMessage };

export function classifyMessage(event: unknown, body: unknown, bot: BotIdentity): Classification {
  const parsedEvent = MessageEventSchema.safeParse(event);
  const parsedBody = EnvelopeSchema.safeParse(body);
  if (!parsedEvent.success) return { kind: "drop", reason: "malformed", detail: z.prettifyError(parsedEvent.error) };
  if (!parsedBody.success) return { kind: "drop", reason: "malformed", detail: z.prettifyError(parsedBody.error) };
  const e = parsedEvent.data;
  const drop = (reason: DropReason, detail?: string): Classification => ({ kind: "drop", reason, channel: e.channel, ts: e.ts, ...(detail ? { detail } : {}) });

  if (e.subtype === "message_changed" || e.edited !== undefined) return drop("edit");
  if (e.subtype === "bot_message" || e.bot_id !== undefined || e.bot_profile !== undefined) return drop("bot");
  if (!HANDLED_SUBTYPES.has(e.subtype)) return drop("subtype", e.subtype);
  if (!e.user) return drop("no_user");
  if (e.user === bot.userId) return drop("self");

  const isDm = e.channel_type === "im" || (e.channel_type === undefined && e.channel.startsWith("D"));
  const raw = e.text ?? "";
  const text = messageText(raw, e.files, bot);
  if (!text.trim()) return drop("empty");

  const inThread = e.thread_ts !== undefined && e.thread_ts !== e.ts;
  const message: SlackMessage = {
    teamId: parsedBody.data.team_id,
    channel: e.channel,
    isDm,
    user: e.user,
    ts: e.ts,
    threadId: isDm ? null : (e.thread_ts ?? e.ts),
    replyThreadTs: isDm ? e.thread_ts : (e.thread_ts ?? e.ts),
    inThread,
    text,
    sentAt: new Date(Number(e.ts) * 1000),
  };
  if (isDm) return { kind: "dm", message };
  if (e.type === "app_mention" || mentions(raw, bot.userId)) return { kind: "mention", message };
  if (e.thread_ts !== undefined) return { kind: "thread_reply", message };
  return drop("not_addressed");
}

export function mentions(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

export function toInbound(m: SlackMessage, author: { displayName?: string }, bot: BotIdentity, text = m.text): Inbound {
  return {
    platform: "slack",
    workspace: { externalId: m.teamId, ...(m.teamId === bot.teamId && bot.teamName ? { name: bot.teamName } : {}) },
    author: { externalId: m.user, ...(author.displayName ? { displayName: author.displayName } : {}) },
    channel: { externalId: m.channel, isDm: m.isDm },
    threadId: m.threadId,
    messageId: m.ts,
    // On slack.com, which opens it in the reader's workspace: the form lessons have always linked
    // with (channel knowledge links with the workspace's own URL, knowledge/channel-message.ts).
    link: permalink(FALLBACK_WORKSPACE_URL, m.channel, m.ts, m.threadId),
    text,
    sentAt: m.sentAt,
  };
}

/** A message's text as cairn keeps it: its wire text made plain, and the names of files it shared. */
export function messageText(raw: string, files: readonly { name?: string | undefined; title?: string | undefined }[] | undefined, bot: Pick<BotIdentity, "userId" | "name">): string {
  const names = (files ?? []).map((f) => f.name ?? f.title).filter((n): n is string => Boolean(n));
  return [plainText(raw, bot), names.length ? `[shared files: ${names.join(", ")}]` : ""].filter(Boolean).join("\n");
}

/**
 * Slack's wire text to what the model reads: cairn's own mention removed (or named), links spelled
 * out, entities decoded. Other people's mentions stay `<@U123>` so the model can mention them back.
 */
export function plainText(raw: string, bot: Pick<BotIdentity, "userId" | "name">): string {
  const self = new RegExp(`<@${bot.userId}(?:\\|[^>]*)?>`, "g");
  return raw
    .replace(new RegExp(`^\\s*${self.source}[\\s,:]*`), "")
    .replace(self, `@${bot.name}`)
    .replace(/<((?:https?|mailto):[^|>\s]+)\|([^>]*)>/g, (_m, url: string, label: string) =>
      label && label !== url && `mailto:${label}` !== url ? `${label} (${url})` : url.replace(/^mailto:/, ""),
    )
    .replace(/<((?:https?|mailto):[^|>\s]+)>/g, (_m, url: string) => url.replace(/^mailto:/, ""))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .trim();
}
