/**
 * A bounded map whose entries expire: for look-ups that are costly to repeat on every message (a
 * platform's users.info, the rows a message resolves to) and harmless to serve slightly stale.
 * Least recently set goes first when full.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();
  private readonly loading = new Map<K, Promise<V>>();

  constructor(
    private readonly opts: { ttlMs: number; max: number; now?: () => number },
  ) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires > this.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * The cached value, or else one load shared by every caller that asks while it runs: a burst of
   * messages from a new place (or a new workspace) reads and creates its rows once, not once each.
   * A failed load is not cached, nor one that raced a write: `generation` is a counter its owner
   * bumps on every write, and a load that saw it change hands its rows to the callers waiting
   * without keeping them.
   */
  load(key: K, loader: () => Promise<V>, generation?: () => number): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let pending = this.loading.get(key);
    if (!pending) {
      const before = generation?.();
      pending = loader()
        .then((value) => {
          if (before === generation?.()) this.set(key, value);
          return value;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  set(key: K, value: V, ttlMs = this.opts.ttlMs): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + ttlMs });
    if (this.entries.size > this.opts.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Drops every entry `drop` picks (say, all rows of a person who was just erased). */
  deleteWhere(drop: (value: V, key: K) => boolean): void {
    for (const [key, e] of this.entries) if (drop(e.value, key)) this.entries.delete(key);
  }
}
