/**
 * A bounded set of recently seen keys with a time to live: platforms deliver one post more than once
 * (Slack as `message` and `app_mention`, and its retries for minutes; gateway replays); this answers
 * "seen it already?" without unbounded growth.
 */
export class RecentSet {
  /** key -> expiry (ms). A Map keeps insertion order, so the oldest entries are first. */
  private readonly items = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  has(key: string): boolean {
    const expiry = this.items.get(key);
    if (expiry === undefined) return false;
    if (expiry <= this.now()) {
      this.items.delete(key);
      return false;
    }
    return true;
  }

  add(key: string): void {
    this.items.delete(key);
    this.items.set(key, this.now() + this.ttlMs);
    this.prune();
  }

  delete(key: string): void {
    this.items.delete(key);
  }

  /** Adds `key`; true when it was not there yet. Synchronous, so two racing events cannot both win. */
  addIfNew(key: string): boolean {
    if (this.has(key)) return false;
    this.add(key);
    return true;
  }

  get size(): number {
    return this.items.size;
  }

  private prune(): void {
    const now = this.now();
    // Every entry has the same TTL, so expiry order is insertion order: stop at the first live one.
    for (const [key, expiry] of this.items) {
      if (expiry > now && this.items.size <= this.max) break;
      this.items.delete(key);
    }
  }
}
