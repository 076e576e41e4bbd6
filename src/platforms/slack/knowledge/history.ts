/**
 * A page of a channel's history for the backfill (`PlatformAdapter.channelHistory`): one
 * `conversations.history` call (newest first, back to `oldest`, continued by its cursor), and for
 * every thread among its messages the thread's replies (`conversations.replies`, every page of
 * them). `conversations.history` holds the channel's top level only; a thread's replies are read
 * with the page that holds the thread's first message, so the page is kept whole or not at all: a
 * backfill cut short goes on from the stored cursor and re-reads the page, replies included, and
 * loses none of them.
 *
 * Rate limits: both methods are rate-limited per app and workspace (and far more tightly for apps
 * not in the Slack Marketplace). The Web API client waits out a 429's Retry-After and tries again
 * (adapter.ts `clientOptions`), so a backfill goes as fast as Slack lets it and no faster. Replies
 * are read one thread after another, never side by side, for the same reason.
 */
import { z } from "zod";
import type { ChannelMessage, HistoryPage } from "../../../ground/channel-events.ts";
import type { Logger } from "../../../ground/log.ts";
import { channelMessage, sayer, SlackMessageSchema, type PersonLookup, type SlackMessageObject } from "./channel-message.ts";
import type { BotIdentity } from "../events.ts";

/** The part of the WebClient this needs. */
export interface HistoryClient {
  conversations: {
    history(args: { channel: string; limit: number; oldest: string; cursor?: string }): Promise<unknown>;
    replies(args: { channel: string; ts: string; limit: number; cursor?: string }): Promise<unknown>;
  };
}

const PageSchema = z.looseObject({
  // Each message is checked on its own: one Slack cannot describe is skipped, not the page.
  messages: z.array(z.unknown()).default([]),
  has_more: z.boolean().optional(),
  response_metadata: z.looseObject({ next_cursor: z.string().optional() }).optional(),
});

/** Replies asked for per call (Slack's maximum is 1,000; it recommends no more than 200). */
const REPLIES_PAGE = 200;
/** A thread longer than this many pages of replies has the rest left out (and a warning logged). */
const MAX_REPLY_PAGES = 100;

export interface HistoryDeps {
  client: HistoryClient;
  names: PersonLookup;
  bot: BotIdentity;
  log: Logger;
}

/** A Slack ts for a time: seconds, to the microsecond. */
export const tsOf = (d: Date): string => (d.getTime() / 1000).toFixed(6);

/** A page's next cursor, or null when Slack says there is nothing older. */
function nextCursor(page: z.infer<typeof PageSchema>): string | null {
  const cursor = page.response_metadata?.next_cursor;
  return cursor ? cursor : null;
}

function messagesOf(page: z.infer<typeof PageSchema>, log: Logger, channel: string): SlackMessageObject[] {
  const out: SlackMessageObject[] = [];
  for (const raw of page.messages) {
    const parsed = SlackMessageSchema.safeParse(raw);
    if (parsed.success) out.push(parsed.data);
    else log.warn({ channel, detail: z.prettifyError(parsed.error) }, "a history message Slack sent could not be read; skipped");
  }
  return out;
}

/** Whether the message starts a thread with replies to read. */
const hasReplies = (m: SlackMessageObject): boolean => (m.reply_count ?? 0) > 0 || (m.thread_ts === m.ts && m.reply_count === undefined);

export async function channelHistory(deps: HistoryDeps, workspace: string, channel: string, page: { cursor: string | null; oldest: Date; limit: number }): Promise<HistoryPage> {
  const raw = await deps.client.conversations.history({ channel, limit: page.limit, oldest: tsOf(page.oldest), ...(page.cursor ? { cursor: page.cursor } : {}) });
  const parsed = PageSchema.parse(raw);
  const top = messagesOf(parsed, deps.log, channel);
  // By ts: a reply also sent to the channel (thread_broadcast) is in both the page and its thread.
  const all = new Map<string, SlackMessageObject>(top.map((m) => [m.ts, m]));
  for (const parent of top.filter(hasReplies)) {
    for (const reply of await threadReplies(deps, channel, parent.ts)) if (!all.has(reply.ts)) all.set(reply.ts, reply);
  }
  // Each author's name once, side by side (users.info is cached, and allows far more calls than history).
  await Promise.all([...new Set([...all.values()].map((m) => sayer(m, deps.bot)).filter((u): u is string => u !== null))].map((user) => deps.names.get(user)));
  const place = { workspace, channel, bot: deps.bot };
  const messages: ChannelMessage[] = [];
  for (const m of all.values()) {
    const message = await channelMessage(m, place, deps.names);
    if (message) messages.push(message);
  }
  messages.sort((a, b) => Number(b.messageId) - Number(a.messageId));
  return { messages, next: parsed.has_more === false ? null : nextCursor(parsed) };
}

/** Every reply of a thread (its first message left out: it is in the history page), oldest first. */
async function threadReplies(deps: HistoryDeps, channel: string, ts: string): Promise<SlackMessageObject[]> {
  const replies: SlackMessageObject[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < MAX_REPLY_PAGES; n++) {
    const parsed = PageSchema.parse(await deps.client.conversations.replies({ channel, ts, limit: REPLIES_PAGE, ...(cursor ? { cursor } : {}) }));
    replies.push(...messagesOf(parsed, deps.log, channel).filter((m) => m.ts !== ts));
    cursor = nextCursor(parsed) ?? undefined;
    if (!cursor) return replies;
  }
  deps.log.warn({ channel, thread: ts, replies: replies.length }, "a thread longer than the backfill reads; its later replies are left out");
  return replies;
}
