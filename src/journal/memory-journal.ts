/**
 * A journal kept in memory: the same hand-off and retries as the file journal, without the disk.
 * For a core given no journal folder (tests, the library used in-process): an outage is waited
 * out, but a killed process loses what it held.
 */
import type { JournalBackend } from "./inbound-log.ts";

export class MemoryJournal implements JournalBackend {
  private seq = 0;
  private readonly entries = new Map<number, number>();

  constructor(private readonly now: () => number = Date.now) {}

  append(): Promise<{ seq: number; at: number }> {
    const entry = { seq: ++this.seq, at: this.now() };
    this.entries.set(entry.seq, entry.at);
    return Promise.resolve(entry);
  }

  remove(seq: number): void {
    this.entries.delete(seq);
  }

  get depth(): number {
    return this.entries.size;
  }

  get oldestAt(): number | null {
    // Map keeps insertion order: the first is the oldest.
    for (const at of this.entries.values()) return at;
    return null;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
