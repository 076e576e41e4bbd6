/**
 * A small real memory provider (src/ground/memory-provider.ts), kept in memory: what `sync` gives
 * it is kept per workspace and person (with the channel it was said in), `prefetch` returns the
 * kept turns that share a word with the message, `forget` drops a person's or a channel's. Every
 * call is recorded with the scope it was given. A test scripts how the next prefetches behave.
 */
import type { Scope, WorkspaceScope } from "../../src/ground/scope.ts";
import type { ForgetSelector, MemoryProvider, ProviderItem, ProviderTurn, SyncedTurn } from "../../src/ground/memory-provider.ts";

/**
 * `normal`: items by word overlap (and the planted ones); `slow`: answers only when its signal
 * aborts (with the abort); `deaf`: ignores its signal and answers when the test lets it (`releaseHeld`);
 * `throw`: fails at once; `junk`: answers something that is not a list of items.
 */
export type PrefetchMode = "normal" | "slow" | "deaf" | "throw" | "junk";

export interface ProviderCall {
  call: "prefetch" | "sync" | "forget";
  /** Every field of the scope the provider was handed. */
  scope: Record<string, unknown>;
  turn?: ProviderTurn | SyncedTurn;
  selector?: ForgetSelector;
}

interface Kept {
  channel: string;
  turn: SyncedTurn;
}

const words = (text: string): Set<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []);

export class InMemoryProvider implements MemoryProvider {
  mode: PrefetchMode = "normal";
  readonly calls: ProviderCall[] = [];
  /** Items every prefetch returns besides what it found: a test's hostile or odd texts. */
  planted: ProviderItem[] = [];
  /** Calls that throw (after being recorded): a provider whose sync or forget fails. */
  readonly failing = new Set<"sync" | "forget">();
  /** A forget that never answers until released (`releaseHeld`): a provider hung mid-erasure. */
  hangForget = false;
  private readonly kept = new Map<string, Kept[]>();
  private held: (() => void)[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];

  constructor(readonly name: string) {}

  async prefetch(scope: Scope, turn: ProviderTurn, signal: AbortSignal): Promise<readonly ProviderItem[]> {
    this.calls.push({ call: "prefetch", scope: { ...scope }, turn });
    if (this.mode === "throw") throw new Error("the index is unavailable");
    if (this.mode === "junk") return [{ text: 42 }] as unknown as ProviderItem[];
    if (this.mode === "slow") await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }));
    if (this.mode === "deaf") await new Promise<void>((resolve) => this.held.push(resolve));
    const asked = words([turn.text, ...turn.recent].join(" "));
    const found = (this.kept.get(key(scope)) ?? []).filter((k) => [...words(`${k.turn.question} ${k.turn.answer}`)].some((w) => asked.has(w)));
    return [...found.map((k) => ({ text: `Asked: ${k.turn.question} Answered: ${k.turn.answer}`, source: `turn ${k.turn.messageId}` })), ...this.planted];
  }

  async sync(scope: Scope, turn: SyncedTurn): Promise<void> {
    this.calls.push({ call: "sync", scope: { ...scope }, turn });
    const synced = this.calls.filter((c) => c.call === "sync").length;
    this.waiters = this.waiters.filter((w) => (w.n <= synced ? (w.resolve(), false) : true));
    if (this.failing.has("sync")) throw new Error("the store is read-only");
    const list = this.kept.get(key(scope)) ?? [];
    list.push({ channel: scope.channelKey, turn });
    this.kept.set(key(scope), list);
  }

  async forget(scope: WorkspaceScope, selector: ForgetSelector): Promise<void> {
    this.calls.push({ call: "forget", scope: { ...scope }, selector });
    if (this.failing.has("forget")) throw new Error("the store is read-only");
    if (this.hangForget) await new Promise<void>((resolve) => this.held.push(resolve));
    for (const [k, list] of this.kept) {
      if (!k.startsWith(`${scope.workspaceId}|`)) continue;
      if (selector.kind === "person" && k === `${scope.workspaceId}|${selector.personId}`) this.kept.delete(k);
      if (selector.kind === "channel") this.kept.set(k, list.filter((e) => e.channel !== selector.channelId));
    }
  }

  /** The turns kept for a person of a workspace. */
  keptFor(workspaceId: string, personId: string): SyncedTurn[] {
    return (this.kept.get(`${workspaceId}|${personId}`) ?? []).map((k) => k.turn);
  }

  /** Resolves once `n` syncs have been received in all. */
  synced(n: number): Promise<void> {
    if (this.calls.filter((c) => c.call === "sync").length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** Lets the deaf prefetches still waiting answer (long after their turn went on). */
  releaseHeld(): void {
    for (const r of this.held) r();
    this.held = [];
  }

  reset(): void {
    this.mode = "normal";
    this.planted = [];
    this.calls.length = 0;
    this.failing.clear();
    this.hangForget = false;
    this.releaseHeld();
  }
}

const key = (scope: { workspaceId: string; personId: string }): string => `${scope.workspaceId}|${scope.personId}`;
