/**
 * The memory providers a core was given (ground/memory-provider.ts), called so that none of them
 * can fail, slow or steer a turn (issue 30):
 * - prefetch: all at once, each under the deadline (its signal aborts, and the turn stops waiting
 *   even when a provider ignores the signal); late or failing, it is skipped, counted and logged.
 *   Its items are outside input: validated, each through the write scanner, capped.
 * - sync: after the reply reached the platform, never awaited by the turn.
 * - forget: awaited by erasure, after the local erasure is done; a failing provider is logged and
 *   counted, and does not undo or block what cairn erased itself.
 * Logs name the provider and what happened, never an item's text.
 */
import { z } from "zod";
import type { Scope, WorkspaceScope } from "../ground/scope.ts";
import type { ForgetSelector, MemoryProvider, ProviderItem, ProviderTurn, SyncedTurn } from "../ground/memory-provider.ts";
import { errText, type Logger } from "../ground/log.ts";
import { beforeDeadline, LATE } from "../ground/deadline.ts";
import { scanForWrite } from "../safety/scanner.ts";
import type { Metrics } from "../ops/metrics.ts";

export const DEFAULT_PROVIDER_DEADLINE_MS = 300;
/** Items and characters all providers together may add to one message: lessons and the question come first. */
export const MAX_PROVIDER_ITEMS = 8;
export const MAX_PROVIDER_CHARS = 4_000;
/** A source is a label, one line. */
const MAX_SOURCE_CHARS = 120;
/** How long erasure waits for a provider's forget: a hung provider must not hang `forget me`. */
export const FORGET_DEADLINE_MS = 10_000;
/** Replies stored and not yet delivered (or never reported): the oldest are dropped past this. */
const MAX_PENDING_SYNCS = 256;

const itemsSchema = z.array(z.object({ text: z.string(), source: z.string() }));

/** An item as the prompt shows it: which provider gave it, and the source it named. */
export interface FoundItem extends ProviderItem {
  provider: string;
}

type Outcome = { kind: "ok"; items: unknown } | { kind: "late" } | { kind: "failed"; err: unknown };

export interface ProvidersDeps {
  providers: readonly MemoryProvider[];
  deadlineMs: number;
  metrics: Pick<Metrics, "providerCall">;
  log: Logger;
}

export class Providers {
  /** Replies stored by a turn, waiting for their delivery to be synced: reply id to the turn. */
  private readonly pending = new Map<number, { scope: Scope; turn: SyncedTurn }>();
  /** Syncs under way, so a stop (or a test) can wait for them: `syncsDone`. */
  private readonly syncing = new Set<Promise<void>>();

  constructor(private readonly deps: ProvidersDeps) {}

  get any(): boolean {
    return this.deps.providers.length > 0;
  }

  /** Every provider's items for this turn, checked and capped; never throws, never waits past the deadline. */
  async prefetch(scope: Scope, turn: ProviderTurn): Promise<FoundItem[]> {
    if (!this.any) return [];
    const found = await Promise.all(this.deps.providers.map((p) => this.prefetchOne(p, scope, turn)));
    return capped(found.flat());
  }

  /** A turn stored its reply: synced once it is delivered (`delivered`). */
  replied(scope: Scope, turn: SyncedTurn): void {
    if (!this.any) return;
    this.pending.set(turn.replyMessageId, { scope, turn });
    for (const id of this.pending.keys()) {
      if (this.pending.size <= MAX_PENDING_SYNCS) break;
      this.pending.delete(id);
    }
  }

  /** The reply reached the platform: every provider is told, in the background. */
  delivered(replyMessageId: number): void {
    const p = this.pending.get(replyMessageId);
    if (!p) return;
    this.pending.delete(replyMessageId);
    for (const provider of this.deps.providers) {
      const done = this.settle(provider, "sync", () => provider.sync(p.scope, p.turn)).finally(() => this.syncing.delete(done));
      this.syncing.add(done);
    }
  }

  /** Resolves once the syncs under way now have ended (each is counted and logged by then). */
  async syncsDone(): Promise<void> {
    await Promise.all([...this.syncing]);
  }

  /** The reply never reached the platform: nothing to sync. */
  undelivered(replyMessageId: number): void {
    this.pending.delete(replyMessageId);
  }

  /** Erasure reaches every provider; called after the local erasure, which a failure here does not undo. */
  async forget(scope: WorkspaceScope, selector: ForgetSelector, deadlineMs = FORGET_DEADLINE_MS): Promise<void> {
    await Promise.all(this.deps.providers.map((p) => this.settle(p, "forget", () => p.forget(scope, selector), deadlineMs)));
  }

  private async settle(provider: MemoryProvider, call: "sync" | "forget", run: () => Promise<void>, deadlineMs?: number): Promise<void> {
    try {
      const result = deadlineMs === undefined ? await run() : await beforeDeadline(Promise.resolve().then(run), deadlineMs);
      this.deps.metrics.providerCall(provider.name, call, result === LATE ? "late" : "ok");
      if (result === LATE) this.deps.log.warn({ provider: provider.name, call, deadlineMs }, "memory provider did not answer in time; not waited for");
    } catch (err) {
      this.deps.metrics.providerCall(provider.name, call, "failed");
      this.deps.log.warn({ provider: provider.name, call, err: errText(err) }, "memory provider failed");
    }
  }

  private async prefetchOne(provider: MemoryProvider, scope: Scope, turn: ProviderTurn): Promise<FoundItem[]> {
    const { deadlineMs, metrics, log } = this.deps;
    const signal = AbortSignal.timeout(deadlineMs);
    const call = Promise.resolve()
      .then(() => provider.prefetch(scope, turn, signal))
      .then(
        (items): Outcome => (signal.aborted ? { kind: "late" } : { kind: "ok", items }),
        (err: unknown): Outcome => (signal.aborted ? { kind: "late" } : { kind: "failed", err }),
      );
    // The race, not only the signal: a provider that ignores its signal must not hold the turn.
    const raced = await beforeDeadline(call, deadlineMs);
    const outcome: Outcome = raced === LATE ? { kind: "late" } : raced;
    if (outcome.kind !== "ok") {
      metrics.providerCall(provider.name, "prefetch", outcome.kind);
      log.warn({ provider: provider.name, result: outcome.kind, deadlineMs, ...(outcome.kind === "failed" ? { err: errText(outcome.err) } : {}) }, "memory provider skipped");
      return [];
    }
    const parsed = itemsSchema.safeParse(outcome.items);
    if (!parsed.success) {
      metrics.providerCall(provider.name, "prefetch", "failed");
      log.warn({ provider: provider.name, result: "failed", err: "its items are not a list of { text, source } strings" }, "memory provider skipped");
      return [];
    }
    metrics.providerCall(provider.name, "prefetch", "ok");
    const kept: FoundItem[] = [];
    for (const item of parsed.data) {
      const source = oneLine(item.source).slice(0, MAX_SOURCE_CHARS) || "(none given)";
      // The same gate as every write: a provider's store may hold what cairn would never save.
      const text = scanForWrite(item.text.trim());
      const label = scanForWrite(source);
      if (!text.ok || !label.ok) {
        metrics.providerCall(provider.name, "prefetch", "blocked");
        log.warn({ provider: provider.name, result: "blocked" }, "memory provider item blocked by the scanner");
        continue;
      }
      if (text.text) kept.push({ provider: provider.name, text: text.text, source: label.text });
    }
    return kept;
  }
}

const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim();

/** The first items, in the providers' order, within the item and character budgets; the last one that fits in part is cut. */
function capped(items: readonly FoundItem[]): FoundItem[] {
  const out: FoundItem[] = [];
  let left = MAX_PROVIDER_CHARS;
  for (const item of items) {
    if (out.length >= MAX_PROVIDER_ITEMS || left <= 0) break;
    const text = item.text.length > left ? `${item.text.slice(0, Math.max(0, left - 1))}…` : item.text;
    out.push({ ...item, text });
    left -= text.length;
  }
  return out;
}
