/**
 * The inbound journal's dispatcher (ground/journal.ts): events kept on disk are handed to their
 * adapter's handler in the order they were kept, at most `maxInFlight` at a time, so a burst
 * waits on disk rather than in memory.
 *
 * Invariants kept here:
 * - An event leaves the journal only once its message is stored or never will be (`settle`).
 * - When storing an event fails, its conversation (`order`) is held: its later events wait behind
 *   it, untried, until a probe finds storage answering; then everything waiting goes, oldest
 *   first. So each conversation is answered in the order it spoke, and is told about the outage
 *   by its first message alone, while other conversations' first messages still get through to
 *   be told too.
 * - An event that keeps failing while storage answers is given up after `maxAttempts` (a bug, not
 *   an outage): logged and counted, never retried forever in front of the others.
 */
import { z } from "zod";
import { errText, type Logger } from "../ground/log.ts";
import { JournalUnavailableError, type InboundJournal, type Kept, type KeptEvent, type KeptHandler, type StoreOutcome } from "../ground/journal.ts";
import type { Platform } from "../ground/types.ts";

/** What the dispatcher needs of the file (file-journal.ts), or of a journal kept in memory. */
export interface JournalBackend {
  append(platform: string, key: string, payload: unknown): Promise<{ seq: number; at: number }>;
  remove(seq: number): void;
  readonly depth: number;
  readonly oldestAt: number | null;
  close(): Promise<void>;
}

export interface StoredEntry {
  readonly seq: number;
  readonly platform: string;
  readonly key: string;
  readonly at: number;
  readonly payload: unknown;
}

export interface InboundLogDeps {
  backend: JournalBackend;
  /** What an earlier process left, oldest first: handed on as soon as its platform's handler is there. */
  pending?: readonly StoredEntry[];
  /** Whether storage answers now (a short database ping). */
  storageUp: () => Promise<boolean>;
  log: Logger;
  /** Counts for /metrics. */
  onReplay?: (platform: Platform) => void;
  onGiveUp?: (platform: Platform) => void;
  onAcknowledged?: (platform: Platform, seconds: number) => void;
  maxInFlight?: number;
  maxAttempts?: number;
  /** Between probes while storage is down: doubling from the first to the second. */
  retryMs?: readonly [number, number];
}

/** As written to the backend: the adapter's payload with the conversation it orders within. */
const Envelope = z.object({ order: z.string(), payload: z.unknown() });

interface Waiting {
  readonly seq: number;
  readonly platform: Platform;
  readonly key: string;
  readonly order: string;
  readonly payload: unknown;
  replayed: boolean;
  attempts: number;
  /** Handed on once while its conversation was held (`KeptEvent.held`): not again until storage answers. */
  shown?: boolean;
  /** Tells `keep`'s caller the first outcome. */
  told?: (outcome: StoreOutcome) => void;
  /** The handler of the adapter that kept it (several adapters may serve one platform); else the platform's. */
  via?: () => KeptHandler | null;
}

export const DEFAULT_MAX_IN_FLIGHT = 64;
const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_RETRY_MS: readonly [number, number] = [250, 5_000];

export class InboundLog implements InboundJournal {
  private readonly handlers = new Map<Platform, KeptHandler>();
  /** Kept and not yet handed on, by seq. */
  private waiting: Waiting[] = [];
  /** `platform:key` of every event kept and not settled: a redelivery keeps nothing twice. */
  private readonly keys = new Set<string>();
  /** Conversations whose storing failed: held until storage answers again. */
  private readonly held = new Set<string>();
  private active = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay: number;
  private closed = false;
  private readonly maxInFlight: number;
  private readonly maxAttempts: number;
  private readonly retryMs: readonly [number, number];

  constructor(private readonly deps: InboundLogDeps) {
    this.maxInFlight = deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.retryMs = deps.retryMs ?? DEFAULT_RETRY_MS;
    this.retryDelay = this.retryMs[0];
    for (const entry of deps.pending ?? []) {
      const kept = Envelope.safeParse(entry.payload);
      this.keys.add(`${entry.platform}:${entry.key}`);
      this.waiting.push({
        seq: entry.seq,
        platform: entry.platform as Platform,
        key: entry.key,
        order: kept.success ? kept.data.order : `${entry.platform}:${entry.key}`,
        payload: kept.success ? kept.data.payload : entry.payload,
        replayed: true,
        attempts: 0,
      });
    }
  }

  handleWith(platform: Platform, handler: KeptHandler): void {
    this.handlers.set(platform, handler);
    this.pump();
  }

  /**
   * The journal as one adapter sees it: what it keeps goes back to its own handler (one core may
   * serve a platform through several adapters, as tests do with Slack's two modes); what an
   * earlier process kept goes to the platform's handler attached last.
   */
  lane(): InboundJournal {
    let own: KeptHandler | null = null;
    return {
      handleWith: (platform, handler) => {
        own = handler;
        this.handleWith(platform, handler);
      },
      keep: (platform, key, payload, order) => this.keepVia(platform, key, payload, order, () => own),
      acknowledged: (platform, seconds) => this.acknowledged(platform, seconds),
    };
  }

  keep(platform: Platform, key: string, payload: unknown, order?: string): Promise<Kept | null> {
    return this.keepVia(platform, key, payload, order, undefined);
  }

  acknowledged(platform: Platform, seconds: number): void {
    this.deps.onAcknowledged?.(platform, seconds);
  }

  /** Events kept and not settled (waiting, or with a handler now). */
  get depth(): number {
    return this.deps.backend.depth;
  }

  /** When the oldest event still kept was kept (ms since the epoch), or null. */
  get oldestAt(): number | null {
    return this.deps.backend.oldestAt;
  }

  /** Some conversation waits for storage to answer again. */
  get waitingForStorage(): boolean {
    return this.held.size > 0;
  }

  /** Hands nothing more on; the file keeps what is pending for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.deps.backend.close();
  }

  private async keepVia(platform: Platform, key: string, payload: unknown, order: string | undefined, via: (() => KeptHandler | null) | undefined): Promise<Kept | null> {
    if (this.closed) throw new JournalUnavailableError("the journal is closed (cairn is stopping)");
    const id = `${platform}:${key}`;
    if (this.keys.has(id)) return null;
    this.keys.add(id);
    const conversation = `${platform}:${order ?? key}`;
    let stored: { seq: number };
    try {
      stored = await this.deps.backend.append(platform, key, { order: conversation, payload });
    } catch (err) {
      this.keys.delete(id);
      throw new JournalUnavailableError(`could not keep the event in the journal: ${errText(err)}`, { cause: err });
    }
    let told: (outcome: StoreOutcome) => void = () => {};
    const settled = new Promise<StoreOutcome>((resolve) => (told = resolve));
    this.insert({ seq: stored.seq, platform, key, order: conversation, payload, replayed: false, attempts: 0, told, ...(via ? { via } : {}) });
    this.pump();
    return { settled };
  }

  /** Keeps `waiting` in seq order: an event handed back after a failure goes before later ones. */
  private insert(event: Waiting): void {
    let i = this.waiting.length;
    while (i > 0 && this.waiting[i - 1]!.seq > event.seq) i--;
    this.waiting.splice(i, 0, event);
  }

  private pump(): void {
    if (this.closed) return;
    // Per platform: an event whose platform has no handler yet waits without holding up the others.
    const unhandled = new Set<Platform>();
    for (let i = 0; i < this.waiting.length && this.active < this.maxInFlight; ) {
      const event = this.waiting[i]!;
      const handler = unhandled.has(event.platform) ? undefined : (event.via?.() ?? this.handlers.get(event.platform));
      const held = this.held.has(event.order);
      if (!handler || (held && event.shown)) {
        if (!handler) unhandled.add(event.platform);
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      // Held: shown to its adapter once, to be marked as waiting, never stored out of its turn.
      if (held) event.shown = true;
      this.hand(event, handler, held);
    }
  }

  private hand(event: Waiting, handler: KeptHandler, held: boolean): void {
    this.active++;
    if (event.replayed) this.deps.onReplay?.(event.platform);
    let done = false;
    const settle = (outcome: StoreOutcome): void => {
      if (done) return;
      done = true;
      this.active--;
      this.settled(event, outcome);
    };
    const kept: KeptEvent = { seq: event.seq, platform: event.platform, key: event.key, payload: event.payload, replayed: event.replayed, held };
    try {
      handler(kept, settle);
    } catch (err) {
      this.deps.log.error({ err: errText(err), platform: event.platform, key: event.key }, "a kept event's handler threw");
      settle("failed");
    }
  }

  private settled(event: Waiting, outcome: StoreOutcome): void {
    event.told?.(outcome);
    if (outcome !== "failed") {
      this.keys.delete(`${event.platform}:${event.key}`);
      this.deps.backend.remove(event.seq);
      if (outcome === "stored") this.retryDelay = this.retryMs[0];
      this.pump();
      return;
    }
    // An attempt counts when storage was thought to answer: not while an outage is known.
    const attempts = this.held.size > 0 || event.shown ? event.attempts : event.attempts + 1;
    if (attempts >= this.maxAttempts) {
      this.keys.delete(`${event.platform}:${event.key}`);
      this.deps.backend.remove(event.seq);
      this.deps.onGiveUp?.(event.platform);
      this.deps.log.error({ platform: event.platform, key: event.key, attempts }, "a kept event could not be stored after several attempts with storage answering; given up");
      this.pump();
      return;
    }
    const { told: _told, ...rest } = event;
    // Shown already: it went the way of a message not stored (marked, its conversation told).
    this.insert({ ...rest, replayed: true, attempts, shown: true });
    if (this.held.size === 0) this.deps.log.warn({ platform: event.platform, depth: this.depth }, "storage failed: kept messages wait until it answers again");
    this.held.add(event.order);
    this.scheduleProbe();
    this.pump();
  }

  private scheduleProbe(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.probe();
    }, this.retryDelay);
    this.retryTimer.unref?.();
  }

  private async probe(): Promise<void> {
    const up = await this.deps.storageUp().catch(() => false);
    if (!up) {
      this.retryDelay = Math.min(this.retryDelay * 2, this.retryMs[1]);
      this.scheduleProbe();
      return;
    }
    this.retryDelay = this.retryMs[0];
    if (this.held.size) this.deps.log.info({ waiting: this.waiting.length }, "storage answers again: handing on the kept messages");
    this.held.clear();
    for (const event of this.waiting) event.shown = false;
    this.pump();
  }
}
