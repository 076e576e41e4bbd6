/**
 * The channels a person is a member of now, from `users.conversations`: which channels' lessons,
 * proposals and skills their Home tab shows (`ViewRequest.channels`). Membership is Slack's to say,
 * and it changes (people leave channels), so it is asked, not remembered from what cairn saw.
 *
 * Cached per person briefly (a click and the republish after it, paging through a group, need no
 * fresh call each); opening the Home tab asks again (`fresh`), so a person who left a channel does
 * not see its lessons the next time they look. A failed call shows no channel's lessons (it is never
 * cached): showing too little is safe, showing a channel the person left is not.
 *
 * Slack answers for a bot token with the public channels the person is in and the private ones the
 * bot shares with them, which are the only private channels cairn could have learned anything in.
 */
import { z } from "zod";
import type { Logger } from "../../../ground/log.ts";
import { TtlCache } from "../../../ground/cache/ttl-cache.ts";
import { slackErrorCode } from "../errors.ts";

/** The part of the WebClient this needs. */
export interface UsersConversationsClient {
  users: { conversations(args: { user: string; types: string; exclude_archived: boolean; limit: number; cursor?: string }): Promise<unknown> };
}

const PageSchema = z.looseObject({
  channels: z.array(z.looseObject({ id: z.string().min(1), is_archived: z.boolean().optional() })),
  response_metadata: z.looseObject({ next_cursor: z.string().optional() }).optional(),
});

export const MEMBERSHIP_TTL_MS = 60_000;
/** Channels per call (Slack's maximum is 1,000; it may return fewer, and a cursor for the rest). */
const PAGE = 200;
/** A person in more channels than this has the rest left out (and a warning logged). */
const MAX_PAGES = 50;

export class ChannelMembership {
  private readonly cache: TtlCache<string, Promise<string[]>>;

  constructor(
    private readonly client: UsersConversationsClient,
    private readonly log: Logger,
    opts: { ttlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.cache = new TtlCache({ ttlMs: opts.ttlMs ?? MEMBERSHIP_TTL_MS, max: opts.max ?? 10_000, ...(opts.now ? { now: opts.now } : {}) });
  }

  /** Never throws. `fresh`: ask Slack even if a recent answer is cached. */
  channels(team: string, user: string, opts: { fresh?: boolean } = {}): Promise<string[]> {
    const key = `${team}:${user}`;
    const hit = opts.fresh ? undefined : this.cache.get(key);
    if (hit) return hit;
    const value = this.fetch(user).then(
      (ids) => ids,
      (err: unknown) => {
        this.log.warn({ user, error: slackErrorCode(err) }, "users.conversations failed; the Home tab shows no channel's lessons");
        this.cache.delete(key);
        return [];
      },
    );
    this.cache.set(key, value);
    return value;
  }

  private async fetch(user: string): Promise<string[]> {
    const ids = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const raw = await this.client.users.conversations({ user, types: "public_channel,private_channel", exclude_archived: true, limit: PAGE, ...(cursor ? { cursor } : {}) });
      const parsed = PageSchema.parse(raw);
      for (const c of parsed.channels) if (c.is_archived !== true) ids.add(c.id);
      cursor = parsed.response_metadata?.next_cursor || undefined;
      if (!cursor) return [...ids];
    }
    this.log.warn({ user, channels: ids.size }, "member of more channels than the Home tab reads; the rest are left out");
    return [...ids];
  }
}
