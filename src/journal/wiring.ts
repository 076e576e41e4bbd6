/**
 * The inbound journal a core runs with: the file journal main.ts opened (with what an earlier process
 * left), or one kept in memory; its storage probe (a database ping that answers in time); its counts.
 */
import type { Logger } from "../ground/log.ts";
import type { Metrics } from "../ops/metrics.ts";
import { within } from "../ops/readiness.ts";
import { InboundLog, type JournalBackend, type StoredEntry } from "./inbound-log.ts";
import { MemoryJournal } from "./memory-journal.ts";

/** A storage probe that takes longer counts as storage down (a hanging database). */
export const STORAGE_PROBE_MS = 2_000;


export interface InboundLogOptions {
  journal?: { backend: JournalBackend; pending: readonly StoredEntry[] } | undefined;
  ping: () => Promise<void>;
  metrics: Metrics;
  log: Logger;
  maxInFlight?: number | undefined;
}

export function inboundLogFor(o: InboundLogOptions): InboundLog {
  return new InboundLog({
    backend: o.journal?.backend ?? new MemoryJournal(),
    pending: o.journal?.pending ?? [],
    storageUp: () => within(STORAGE_PROBE_MS, o.ping()).then(
      () => true,
      () => false,
    ),
    log: o.log,
    onReplay: (platform) => o.metrics.journalReplay(platform),
    onGiveUp: (platform) => o.metrics.journalGiveUp(platform),
    onAcknowledged: (platform, seconds) => o.metrics.acknowledged(platform, seconds),
    ...(o.maxInFlight ? { maxInFlight: o.maxInFlight } : {}),
  });
}
