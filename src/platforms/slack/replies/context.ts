/**
 * The earlier messages of a thread cairn is mentioned in for the first time, read with
 * `conversations.replies` so it knows what "this" refers to. Bounded in messages and characters:
 * the thread's first message and the latest ones are kept, the middle is dropped first.
 */
import { z } from "zod";
import type { Logger } from "../../../ground/log.ts";
import { slackErrorCode } from "../errors.ts";
import { plainText, type BotIdentity, type SlackMessage } from "../events.ts";
import type { NameCache } from "../names.ts";

export interface RepliesClient {
  conversations: { replies(args: { channel: string; ts: string; limit: number; latest: string; inclusive: boolean }): Promise<unknown> };
}

const RepliesSchema = z.looseObject({
  messages: z.array(
    z.looseObject({
      ts: z.string(),
      subtype: z.string().optional(),
      user: z.string().optional(),
      bot_id: z.string().optional(),
      username: z.string().optional(),
      bot_profile: z.looseObject({ name: z.string().optional() }).optional(),
      text: z.string().optional(),
    }),
  ),
});

export const CONTEXT_HEADER = "[Earlier in this thread, before you were mentioned]";
export const CONTEXT_FOOTER = "[End of earlier messages; the new message follows]";

export interface ContextLimits {
  /** Messages read from Slack (one conversations.replies page). */
  messages: number;
  /** Characters of the whole block. */
  chars: number;
  /** Characters per message. */
  perMessage: number;
}

export const DEFAULT_CONTEXT_LIMITS: ContextLimits = { messages: 50, chars: 6000, perMessage: 800 };

/** The earlier messages as a marked block, or "" when there are none or they cannot be read. */
export async function threadContext(
  client: RepliesClient,
  names: NameCache,
  bot: BotIdentity,
  m: SlackMessage,
  log: Logger,
  limits: ContextLimits = DEFAULT_CONTEXT_LIMITS,
): Promise<string> {
  if (!m.inThread || !m.threadId) return "";
  let parsed;
  try {
    const answer = await client.conversations.replies({ channel: m.channel, ts: m.threadId, limit: limits.messages, latest: m.ts, inclusive: false });
    parsed = RepliesSchema.safeParse(answer);
    if (!parsed.success) throw new Error(`unexpected conversations.replies answer: ${parsed.error.message}`);
  } catch (err) {
    log.warn({ channel: m.channel, thread: m.threadId, error: slackErrorCode(err) }, "could not read the thread's earlier messages; answering without them");
    return "";
  }
  const earlier = parsed.data.messages
    .filter((x) => x.ts !== m.ts && Number(x.ts) < Number(m.ts))
    .filter((x) => x.subtype === undefined || ["thread_broadcast", "file_share", "bot_message"].includes(x.subtype));
  const lines: string[] = [];
  for (const x of earlier) {
    const text = plainText(x.text ?? "", bot);
    if (!text) continue;
    const clipped = text.length > limits.perMessage ? `${text.slice(0, limits.perMessage - 1)}…` : text;
    lines.push(`${await speaker(x, names, bot)}: ${clipped.replace(/\n+/g, " ")}`);
  }
  if (!lines.length) return "";
  return [CONTEXT_HEADER, ...fit(lines, limits.chars), CONTEXT_FOOTER].join("\n");
}

async function speaker(x: { user?: string | undefined; bot_id?: string | undefined; username?: string | undefined; bot_profile?: { name?: string | undefined } | undefined }, names: NameCache, bot: BotIdentity): Promise<string> {
  if (x.user === bot.userId || (x.bot_id !== undefined && x.bot_id === bot.botId)) return `${bot.name} (you)`;
  if (x.bot_id !== undefined || !x.user) return `${x.bot_profile?.name ?? x.username ?? "a bot"} (bot)`;
  return (await names.get(x.user)).displayName ?? x.user;
}

/** Keeps the first line (the thread's topic) and as many of the latest as fit in `chars`. */
function fit(lines: string[], chars: number): string[] {
  const [first, ...rest] = lines;
  if (first === undefined) return [];
  let budget = chars - first.length;
  const kept: string[] = [];
  for (let i = rest.length - 1; i >= 0; i--) {
    const line = rest[i]!;
    if (line.length + 1 > budget) break;
    kept.unshift(line);
    budget -= line.length + 1;
  }
  const omitted = rest.length - kept.length;
  return [first.slice(0, chars), ...(omitted ? [`(${omitted} earlier message${omitted === 1 ? "" : "s"} left out)`] : []), ...kept];
}
