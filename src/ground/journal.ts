/**
 * The journal an adapter keeps a platform's event in before acknowledging it (src/journal/): on
 * local disk, so a database outage or a killed process loses nothing the platform was told is
 * taken. What is kept is handed to the adapter's handler, live or replayed, the same way.
 */
import type { Platform } from "./types.ts";

/**
 * What became of a kept event's message: `stored`; `not_stored` (a duplicate, a bot, a refusal,
 * nothing to answer: it never will be); `failed` (storage unavailable): kept, handed back once
 * storage answers again.
 */
export type StoreOutcome = "stored" | "not_stored" | "failed";

export interface KeptEvent {
  readonly seq: number;
  readonly platform: Platform;
  /** The event's identity on its platform: a second `keep` of it while it is pending keeps nothing. */
  readonly key: string;
  /** What the adapter kept, as it gave it (read back from disk after a restart: validate it). */
  readonly payload: unknown;
  /** Handed to a handler before: by an earlier process, or again after storage failed. */
  readonly replayed: boolean;
  /**
   * Its conversation waits for storage (an earlier message of it could not be stored): not to be
   * stored now, only marked as waiting (ReceiveOptions.held). Handed on again once storage answers.
   */
  readonly held: boolean;
}

/** An adapter's handling of a kept event; `settle` must be called once (later calls are ignored). */
export type KeptHandler = (event: KeptEvent, settle: (outcome: StoreOutcome) => void) => void;

export interface Kept {
  readonly settled: Promise<StoreOutcome>;
}

export interface InboundJournal {
  /** Where this platform's kept events go, live and replayed, oldest first. */
  handleWith(platform: Platform, handler: KeptHandler): void;
  /**
   * Keeps an event on disk; once resolved the platform may be acknowledged. `settled` resolves with
   * what became of its message (the first outcome: `failed` once storage failed, whatever a replay
   * does later). Null: the same event is pending already (a redelivery): acknowledge it, nothing
   * more. Throws JournalUnavailableError when it cannot be kept: the platform must not be
   * acknowledged (it delivers the event again). `order`: the conversation (or a coarser place:
   * a channel) whose events must be answered in the order kept; default: the event alone.
   */
  keep(platform: Platform, key: string, payload: unknown, order?: string): Promise<Kept | null>;
  /** The platform was acknowledged `seconds` after the event arrived (for /metrics). */
  acknowledged(platform: Platform, seconds: number): void;
}

export class JournalUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JournalUnavailableError";
  }
}
