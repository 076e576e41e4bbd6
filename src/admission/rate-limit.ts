/**
 * Per-person message budget over a sliding hour, so one person cannot exhaust the model budget.
 * In-process: each replica limits what it handles (a shared limit needs the database; later).
 */
export type RateVerdict = { ok: true } | { ok: false; retryAfterMs: number };

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly perWindow: number,
    private readonly windowMs = 60 * 60 * 1000,
  ) {}

  take(key: string, now: number): RateVerdict {
    if (this.perWindow <= 0) return { ok: true };
    const recent = (this.hits.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (recent.length >= this.perWindow) {
      this.hits.set(key, recent);
      return { ok: false, retryAfterMs: this.windowMs - (now - recent[0]!) };
    }
    recent.push(now);
    this.hits.set(key, recent);
    return { ok: true };
  }
}


export function limitText(perHour: number, retryAfterMs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `You've reached the limit of ${perHour} messages per hour. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
