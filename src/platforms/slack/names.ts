/**
 * Display names from `users.info`, cached: every turn and reaction needs the speaker's name, and
 * Slack rate-limits users.info (Tier 4), so one lookup per person per TTL is plenty.
 */
import { z } from "zod";
import type { Logger } from "../../log.ts";
import { slackErrorCode } from "./errors.ts";

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
  private readonly cache = new Map<string, { value: Promise<SlackPerson>; expires: number }>();
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(
    private readonly client: UsersInfoClient,
    private readonly log: Logger,
    opts: { ttlMs?: number; failureTtlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 60 * 60_000;
    this.failureTtlMs = opts.failureTtlMs ?? 60_000;
    this.max = opts.max ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Never throws: a failed lookup gives a person without a name (the id stands in for it). */
  get(userId: string): Promise<SlackPerson> {
    const hit = this.cache.get(userId);
    if (hit && hit.expires > this.now()) return hit.value;
    // The promise is cached, so concurrent turns of one person share a single users.info call.
    const value = this.fetch(userId);
    this.set(userId, value, this.ttlMs);
    return value;
  }

  private set(userId: string, value: Promise<SlackPerson>, ttl: number): void {
    this.cache.delete(userId);
    this.cache.set(userId, { value, expires: this.now() + ttl });
    if (this.cache.size > this.max) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
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
      this.set(userId, Promise.resolve(fallback), this.failureTtlMs);
      return fallback;
    }
  }
}
