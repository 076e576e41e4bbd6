/**
 * Per-conversation ordering with bounded concurrency: jobs with the same key run strictly one after
 * another, in arrival order; jobs with different keys run side by side, at most `limit` at once
 * (slots.ts: started in the order they became ready).
 */
import { Slots } from "./slots.ts";

export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly slots: Slots;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency limit must be a positive integer, got ${limit}`);
    this.slots = new Slots(limit);
  }

  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const result = prev.then(
      () => this.withSlot(job),
      () => this.withSlot(job),
    );
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // Forget the key once its last job is done, so idle conversations hold no memory.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Whether this key has queued or running work. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }

  /** Keys with queued or running work. */
  get activeKeys(): number {
    return this.tails.size;
  }

  private withSlot<T>(job: () => Promise<T>): Promise<T> {
    return this.slots.run(job);
  }
}
