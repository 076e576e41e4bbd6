/**
 * Per-person message budget over a sliding hour, so one person cannot exhaust the model budget.
 *
 * Counted in the database (every person message is stored before it is admitted): every replica
 * sharing the database sees the same count, and a restart forgets nothing. A message is admitted
 * when fewer than `perWindow` of the person's messages in the window spent an answer: admitted
 * before it, or answered (a message another process recovered after a crash skipped this check).
 * Failed ones do not count: the one over the limit is answered with the limit's reply, stored as
 * failed, so the wait that reply names holds however many more the person sends meanwhile; a
 * message the model could not answer spent no answer either.
 *
 * The count and the mark are one statement run under a lock per person (rate-store.ts): replicas
 * checking one person's messages at the same moment take turns, and each counts the admissions
 * committed before it. (Counting earlier stored messages instead, with no mark, missed a message
 * stored by another replica but not yet committed: both were let through.)
 */
import type { PersonScope } from "../ground/types.ts";
import type { RateStore } from "./rate-store.ts";

export type RateVerdict = { ok: true } | { ok: false; retryAfterMs: number };

export const RATE_WINDOW_MS = 60 * 60 * 1000;

export class RateLimiter {
  constructor(
    private readonly store: RateStore,
    private readonly perWindow: number,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  /**
   * Admits the person's stored message `messageId` if it is within their budget at `now`; if not,
   * the time until the oldest message that keeps the window full leaves it.
   */
  async take(person: PersonScope, messageId: number, now: Date): Promise<RateVerdict> {
    if (this.perWindow <= 0) return { ok: true };
    const since = new Date(now.getTime() - this.windowMs);
    if (await this.store.admit(person, messageId, since, this.perWindow)) return { ok: true };
    const oldest = await this.store.nthSpent(person, since, this.perWindow - 1);
    // None: an answer left the window since the check; the person may try again at once.
    if (!oldest) return { ok: false, retryAfterMs: 0 };
    return { ok: false, retryAfterMs: Math.max(0, oldest.getTime() + this.windowMs - now.getTime()) };
  }
}

export function limitText(perHour: number, retryAfterMs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `You've reached the limit of ${perHour} messages per hour. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
