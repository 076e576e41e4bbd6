/**
 * Group commit: items that arrive while earlier batches are under way wait and go together as the
 * next batch. Under light load an item goes at once, alone (no timer, no added wait); in a burst
 * (200 new conversations storing their first messages) the items queued behind a busy database go
 * as a few statements instead of one each, and each statement is a round trip and a commit.
 *
 * `run` settles each item of a batch on its own (one item's failure is not its neighbours'), in
 * the order given; a batch that throws fails all its items. Items are taken in arrival order.
 *
 * `gather` is for a database whose statements are calls, not round trips (SQLite): nothing is ever
 * under way for items to queue behind, so an item that finds nothing under way waits until
 * `gather` calls back (the event loop's next turn) and goes with every item added before then.
 */
export type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class GroupBatch<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private running = 0;
  private gathering = false;

  constructor(
    private readonly run: (items: readonly I[]) => Promise<readonly Settled<O>[]>,
    private readonly opts: { maxItems: number; maxInFlight: number; gather?: (then: () => void) => void },
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      const { gather } = this.opts;
      if (!gather) return this.pump();
      if (this.gathering || this.running >= this.opts.maxInFlight) return;
      this.gathering = true;
      gather(() => {
        this.gathering = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.running < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxItems);
      this.running++;
      this.send(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const r = results[i];
        if (!r) w.reject(new Error(`a batch of ${batch.length} settled only ${results.length} of its items`));
        else if (r.ok) w.resolve(r.value);
        else w.reject(r.error);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
