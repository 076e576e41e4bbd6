/**
 * Every model call's tokens and result, counted against the workspace the call names (agent/model.ts,
 * `ModelCall`) by UTC hour and written in batches: a turn adds no statement of its own (the design
 * keeps per-turn writes to what cannot wait), the ledger adds its sums every FLUSH_MS and when the
 * process stops. A crash loses at most that interval's counts, which only the weekly report's
 * token line reads; a failed write keeps the sums for the next flush.
 */
import type { Metrics, ModelCall } from "./metrics.ts";
import type { UsageCounts, UsageRow, UsageStore, UsageTotal } from "./usage-store.ts";

export const FLUSH_MS = 15_000;

const KEY_SEP = "\u0000";

/** The UTC hour a time falls in, as the ledger keys it: "2026-12-04T16". */
export const hourOf = (d: Date): string => d.toISOString().slice(0, 13);

function counts(call: ModelCall & { workspaceId: string }): UsageCounts {
  const u = call.usage;
  // Only real counts: a negative or fractional value from a proxy would corrupt the sums.
  const n = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  return {
    calls: 1,
    failures: call.result !== "ok" && call.result !== "aborted" ? 1 : 0,
    inputTokens: n(u?.input_tokens),
    outputTokens: n(u?.output_tokens),
    cacheReadTokens: n(u?.cache_read_input_tokens),
    cacheWriteTokens: n(u?.cache_creation_input_tokens),
  };
}

function addCounts(into: UsageCounts, from: UsageCounts): void {
  into.calls += from.calls;
  into.failures += from.failures;
  into.inputTokens += from.inputTokens;
  into.outputTokens += from.outputTokens;
  into.cacheReadTokens += from.cacheReadTokens;
  into.cacheWriteTokens += from.cacheWriteTokens;
}

export class UsageLedger {
  private pending = new Map<string, UsageRow>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<UsageStore, "add" | "totals">,
    private readonly onError: (err: unknown) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A ledger told of every model call `metrics` sees. */
  static of(store: Pick<UsageStore, "add" | "totals">, metrics: Pick<Metrics, "onModelCall">, onError: (err: unknown) => void): UsageLedger {
    const ledger = new UsageLedger(store, onError);
    metrics.onModelCall((call) => ledger.record({ ...call, workspaceId: call.workspaceId ?? "" }));
    return ledger;
  }

  /** What was stored for a workspace's hours [fromHour, toHour); flush first for what is still counted here. */
  totals(workspaceId: string, fromHour: string, toHour: string): Promise<UsageTotal[]> {
    return this.store.totals(workspaceId, fromHour, toHour);
  }

  record(call: ModelCall & { workspaceId: string }): void {
    const hour = hourOf(this.now());
    const key = [call.workspaceId, hour, call.model, call.purpose].join(KEY_SEP);
    const add = counts(call);
    const row = this.pending.get(key);
    if (!row) {
      this.pending.set(key, { workspaceId: call.workspaceId, hour, model: call.model, purpose: call.purpose, ...add });
      return;
    }
    addCounts(row, add);
  }

  /** Writes what was counted since the last flush; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.add([...batch.values()]);
    } catch (err) {
      // Kept for the next flush, merged with what was counted meanwhile.
      for (const [key, row] of batch) {
        const now = this.pending.get(key);
        if (!now) this.pending.set(key, row);
        else addCounts(now, row);
      }
      this.onError(err);
    }
  }
}
