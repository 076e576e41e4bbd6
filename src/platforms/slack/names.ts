/**
 * Display names from `users.info`, cached: every turn and reaction needs the speaker's name, and
 * Slack rate-limits users.info (Tier 4), so one lookup per person per TTL is plenty.
 */
import { z } from "zod";
import type { Logger } from "../../ground/log.ts";
import { slackErrorCode } from "./errors.ts";
import { TtlCache } from "../../ground/cache/ttl-cache.ts";

export interface SlackPerson {
  displayName?: string;
  isBot: boolean;
}

/** The part of the WebClient this needs: small, so tests and callers can see what is used. */
export interface UsersInfoClient {
  users: { info(args: { user: string }): Promise<unknown> };
}

const UserInfoSchema = z.looseObject({
  user: z.looseObject({
    id: z.string(),
    name: z.string().optional(),
    real_name: z.string().optional(),
    is_bot: z.boolean().optional(),
    profile: z.looseObject({ display_name: z.string().optional(), real_name: z.string().optional() }).optional(),
  }),
});

export class NameCache {
  private readonly cache: TtlCache<string, Promise<SlackPerson>>;
  private readonly failureTtlMs: number;

  constructor(
    private readonly client: UsersInfoClient,
    private readonly log: Logger,
    opts: { ttlMs?: number; failureTtlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.cache = new TtlCache({ ttlMs: opts.ttlMs ?? 60 * 60_000, max: opts.max ?? 10_000, ...(opts.now ? { now: opts.now } : {}) });
    this.failureTtlMs = opts.failureTtlMs ?? 60_000;
  }

  /** Never throws: a failed lookup gives a person without a name (the id stands in for it). */
  get(userId: string): Promise<SlackPerson> {
    const hit = this.cache.get(userId);
    if (hit) return hit;
    // The promise is cached, so concurrent turns of one person share a single users.info call.
    const value = this.fetch(userId);
    this.cache.set(userId, value);
    return value;
  }

  private async fetch(userId: string): Promise<SlackPerson> {
    try {
      const parsed = UserInfoSchema.safeParse(await this.client.users.info({ user: userId }));
      if (!parsed.success) throw new Error(`unexpected users.info answer: ${parsed.error.message}`);
      const u = parsed.data.user;
      const displayName = [u.profile?.display_name, u.profile?.real_name, u.real_name, u.name].find((n) => n && n.trim())?.trim();
      return { ...(displayName ? { displayName } : {}), isBot: u.is_bot === true };
    } catch (err) {
      this.log.warn({ user: userId, error: slackErrorCode(err) }, "users.info failed; using the id as the name");
      const fallback: SlackPerson = { isBot: false };
      // Retry a failed lookup sooner than a good one expires.
      this.cache.set(userId, Promise.resolve(fallback), this.failureTtlMs);
      return fallback;
    }
  }
}
