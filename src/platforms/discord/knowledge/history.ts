/**
 * A listened channel's history, a page at a time, for the core's backfill (`channelHistory`).
 *
 * - GET /channels/{id}/messages?limit=100&before=<id>: Discord's pages are newest first and at most
 *   100 long. Reading stops at `oldest` (the backfill's depth).
 * - Then its threads, one after another, each the same way: the active ones (GET
 *   /guilds/{guild}/threads/active, the guild's list filtered to this channel) and the archived
 *   public ones archived after `oldest` (GET /channels/{id}/threads/archived/public; one archived
 *   before has nothing newer). Private threads are left out, as live (place.ts). Their
 *   messages are kept under the channel, with the thread's id and a link into the thread.
 * - The cursor says where the next page starts: `<message id>` in the channel itself (a bare id,
 *   as a channel-only cursor always was), `thread:<thread id>[:<message id>]` in a thread. Threads are
 *   taken in id order, so a backfill resumed on another process (which lists them again) goes on
 *   with the threads after the one it was in.
 * - Rate limits: discord.js's REST client waits out a 429 (`retry_after`) and asks again; the
 *   backfill just takes longer.
 * - A channel or thread that is gone, or that cairn may no longer read, ends its part of the
 *   backfill (what was kept stays) instead of failing it over and over.
 */
import { ChannelType, DiscordAPIError, RESTJSONErrorCodes, Routes, type Client } from "discord.js";
import { TtlCache } from "../../../ground/cache/ttl-cache.ts";
import type { HistoryPage } from "../../../ground/channel-events.ts";
import { errText, type Logger } from "../../../ground/log.ts";
import { channelMessage, type Names } from "./message.ts";
import { WireMessages, WireThreadList } from "./wire.ts";

/** The most messages Discord returns per page. */
export const DISCORD_HISTORY_PAGE = 100;
/** Pages of archived threads read per channel at most (100 threads each). */
const ARCHIVED_PAGES = 10;
/** A backfill reads one channel's thread list once, not at every page. */
const THREADS_TTL_MS = 10 * 60_000;

export interface HistoryCursor {
  /** The thread being read; null: the channel itself. */
  thread: string | null;
  /** The oldest message read so far there; null: from the newest. */
  before: string | null;
}

const SNOWFLAKE = /^\d{1,20}$/;

export function parseCursor(cursor: string | null): HistoryCursor {
  if (!cursor) return { thread: null, before: null };
  const m = /^thread:(\d{1,20})(?::(\d{1,20}))?$/.exec(cursor);
  if (m) return { thread: m[1]!, before: m[2] ?? null };
  if (SNOWFLAKE.test(cursor)) return { thread: null, before: cursor };
  throw new Error(`not a Discord history cursor: ${cursor}`);
}

export function formatCursor(c: HistoryCursor): string {
  if (c.thread === null) {
    if (c.before === null) throw new Error("the start of a channel has no cursor");
    return c.before;
  }
  return c.before === null ? `thread:${c.thread}` : `thread:${c.thread}:${c.before}`;
}

export class ChannelHistory {
  private readonly threads = new TtlCache<string, string[]>({ ttlMs: THREADS_TTL_MS, max: 1_000 });

  constructor(
    private readonly client: Client,
    private readonly names: Names,
    private readonly log: Logger,
  ) {}

  async page(guild: string, channel: string, opts: { cursor: string | null; oldest: Date; limit: number }): Promise<HistoryPage> {
    const at = parseCursor(opts.cursor);
    // A forum's posts are all threads: the channel itself has no messages to read.
    if (at.thread === null && at.before === null && this.isForum(channel)) return this.afterwards(guild, channel, null, opts.oldest);
    const size = Math.max(1, Math.min(opts.limit, DISCORD_HISTORY_PAGE));
    const raw = await this.read(at.thread ?? channel, size, at.before);
    const fresh = raw.filter((m) => new Date(m.timestamp) >= opts.oldest);
    const place = { guild, channel, threadId: at.thread };
    const messages = fresh.flatMap((m) => channelMessage(m, place, this.names) ?? []);
    const oldestRead = raw.at(-1);
    if (oldestRead && raw.length === size && fresh.length === raw.length) return { messages, next: formatCursor({ thread: at.thread, before: oldestRead.id }) };
    return { messages, next: (await this.afterwards(guild, channel, at.thread, opts.oldest)).next };
  }

  /** Where reading goes once a part (the channel, or a thread) is done: the next thread, or the end. */
  private async afterwards(guild: string, channel: string, after: string | null, oldest: Date): Promise<HistoryPage> {
    const ids = await this.threadsOf(guild, channel, oldest);
    const next = ids.find((id) => after === null || BigInt(id) > BigInt(after));
    return { messages: [], next: next ? formatCursor({ thread: next, before: null }) : null };
  }

  /** One page, newest first; empty when the channel is gone or closed to cairn. */
  private async read(channelId: string, limit: number, before: string | null) {
    const query = new URLSearchParams({ limit: String(limit), ...(before ? { before } : {}) });
    try {
      return WireMessages.parse(await this.client.rest.get(Routes.channelMessages(channelId), { query }));
    } catch (err) {
      if (!closed(err)) throw err;
      this.log.warn({ channel: channelId, err: errText(err) }, "a listened channel or thread cannot be read any more; its backfill ends here");
      return [];
    }
  }

  private isForum(channel: string): boolean {
    const type = this.client.channels.cache.get(channel)?.type;
    return type === ChannelType.GuildForum || type === ChannelType.GuildMedia;
  }

  /** The channel's public threads worth reading, in id order. */
  private threadsOf(guild: string, channel: string, oldest: Date): Promise<string[]> {
    return this.threads.load(`${guild}/${channel}`, async () => {
      const ids = new Set<string>();
      try {
        const active = WireThreadList.parse(await this.client.rest.get(Routes.guildActiveThreads(guild)));
        for (const t of active.threads) if (t.parent_id === channel && t.type !== ChannelType.PrivateThread) ids.add(t.id);
        let before: string | null = null;
        for (let page = 0; page < ARCHIVED_PAGES; page++) {
          const query = new URLSearchParams({ limit: "100", ...(before ? { before } : {}) });
          const archived = WireThreadList.parse(await this.client.rest.get(Routes.channelThreads(channel, "public"), { query }));
          // Newest archived first: once one was archived before `oldest`, so were the rest.
          const recent = archived.threads.filter((t) => !t.thread_metadata || new Date(t.thread_metadata.archive_timestamp) >= oldest);
          for (const t of recent) ids.add(t.id);
          const last = archived.threads.at(-1)?.thread_metadata?.archive_timestamp;
          if (!archived.has_more || !last || recent.length < archived.threads.length) break;
          before = last;
        }
      } catch (err) {
        // The channel's own history is what matters most: without its threads the backfill still ends.
        if (!closed(err)) throw err;
        this.log.warn({ channel, err: errText(err) }, "could not list a listened channel's threads; only the channel itself is read back");
      }
      return [...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
    });
  }
}

/** Discord's answers for a channel cairn cannot read: gone, or not allowed. */
function closed(err: unknown): boolean {
  return (
    err instanceof DiscordAPIError &&
    (err.code === RESTJSONErrorCodes.UnknownChannel || err.code === RESTJSONErrorCodes.MissingAccess || err.code === RESTJSONErrorCodes.MissingPermissions || err.status === 404)
  );
}
