/**
 * A durable local journal of inbound platform events. Before cairn acknowledges an event it appends
 * it here and waits for the fdatasync, so a database outage or a kill -9 loses nothing: what open()
 * finds pending is replayed into the database later, and removed once stored.
 *
 * Segment files (segment.ts) hold entry and removal lines; appends are group-committed (one write and
 * one fdatasync a batch); a segment file goes once it is not the active one and neither it nor any
 * older one holds an entry still pending, so a removal record never goes before its entry's file.
 * Delivery is at least once: an entry whose batch failed after its bytes reached the file may come
 * back as pending after a restart, and the caller dedupes by key.
 */
import { realpath } from "node:fs/promises";
import { makeFolders } from "../ground/paths.ts";
import { resolve } from "node:path";
import { causeText, JournalWriteError, unwritable } from "./errors.ts";
import { releaseLock, takeLock } from "./lock.ts";
import { appendDurably, createSegment, entryText, readSegments, removalText, replay, type JournalEntry } from "./segment.ts";
import { SegmentFiles } from "./segment-files.ts";

export { JournalOpenError, JournalWriteError } from "./errors.ts";
export type { JournalEntry } from "./segment.ts";

export interface JournalOptions {
  /** Default 64 MiB: total bytes of segment files on disk; an append that would pass it is refused. */
  maxBytes?: number;
  /** Default 4 MiB: start a new segment file once the active one is at least this big. */
  segmentBytes?: number;
  /** Default 2: appends within this window are written and fdatasync'ed together (group commit). */
  batchMs?: number;
  /** Default Date.now. */
  now?: () => number;
}

const MiB = 1024 * 1024;
/** A queue this big is written at once, not after batchMs. */
const BIG_BATCH = 256 * 1024;
/** After a failed batch, the next one (re-queued removals, new appends) waits this long. */
const RETRY_MS = 1000;

interface Waiter {
  readonly entry: JournalEntry;
  readonly resolve: (entry: JournalEntry) => void;
  readonly reject: (err: Error) => void;
}
interface Batch {
  texts: string[];
  bytes: number;
  waiters: Waiter[];
  removals: number[];
}
const emptyBatch = (): Batch => ({ texts: [], bytes: 0, waiters: [], removals: [] });

export class FileJournal {
  /** Entries appended and not removed (removal asked for), in seq order. */
  private readonly pending: Map<number, JournalEntry>;
  private queue = emptyBatch();
  private inflightBytes = 0;
  private running: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private lastError: unknown;
  private closing: Promise<void> | undefined;
  private closed = false;
  private flushes = 0;

  private constructor(
    private readonly dir: string,
    private readonly real: string,
    private readonly opts: Required<JournalOptions>,
    private readonly files: SegmentFiles,
    private nextSeq: number,
    pending: JournalEntry[],
  ) {
    this.pending = new Map(pending.map((e) => [e.seq, e]));
  }

  /** Opens (creating the folder, mkdir -p) and reads what an earlier process left: the entries never removed, in seq order. */
  static async open(dir: string, opts: JournalOptions = {}): Promise<{ journal: FileJournal; pending: JournalEntry[] }> {
    const abs = resolve(dir);
    const options: Required<JournalOptions> = { maxBytes: 64 * MiB, segmentBytes: 4 * MiB, batchMs: 2, now: Date.now, ...definedOnly(opts) };
    try {
      // Not mkdir(recursive): it spins forever on a folder that cannot exist (under /proc).
      makeFolders(abs);
    } catch (err) {
      throw unwritable(abs, err);
    }
    // The real path keys the folders open in this process, so a symbolic link does not open one twice.
    const real = await realpath(abs).catch(() => abs);
    await takeLock(abs, real);
    try {
      const found = await readSegments(abs).catch((err: unknown) => Promise.reject(unwritable(abs, err)));
      const { pending, home, maxSeq } = replay(found);
      const segments = found.map((f) => f.segment);
      // Always a new active segment: never append after a tail that may be torn.
      const first = Math.max(maxSeq + 1, (segments.at(-1)?.first ?? 0) + 1);
      segments.push(await createSegment(abs, first).catch((err: unknown) => Promise.reject(unwritable(abs, err))));
      const files = new SegmentFiles(abs, segments, home);
      await files.dropOld();
      const journal = new FileJournal(abs, real, options, files, maxSeq + 1, pending);
      return { journal, pending };
    } catch (err) {
      await releaseLock(abs, real);
      throw err;
    }
  }

  /** Resolves once the entry is on disk (written and fdatasync'ed with its batch). Rejects with JournalWriteError. */
  async append(platform: string, key: string, payload: unknown): Promise<JournalEntry> {
    if (this.closing) throw new JournalWriteError("closed", `the journal in ${this.dir} is closed, so the event was not kept.`);
    const entry: JournalEntry = { seq: this.nextSeq, platform, key, at: this.opts.now(), payload };
    const text = entryText(entry);
    const size = Buffer.byteLength(text);
    if (this.files.bytes + this.inflightBytes + this.queue.bytes + size > this.opts.maxBytes) {
      throw new JournalWriteError("full", `the journal folder ${this.dir} is full at ${this.opts.maxBytes} bytes, the limit set by CAIRN_JOURNAL_MAX_BYTES, so the event was not kept.`);
    }
    this.nextSeq++;
    return new Promise<JournalEntry>((resolve, reject) => {
      this.queue.texts.push(text);
      this.queue.bytes += size;
      this.queue.waiters.push({ entry, resolve, reject });
      this.schedule();
    });
  }

  /** The entry is done with: a removal record is written with the next batch (not awaited by the caller); idempotent; an unknown seq is ignored. */
  remove(seq: number): void {
    if (this.closing || !this.pending.delete(seq)) return;
    this.queueRemoval(seq);
    this.schedule();
  }

  /** Entries appended (this process or an earlier one) and not removed. */
  get depth(): number {
    return this.pending.size;
  }

  /** `at` of the oldest entry not removed, or null. */
  get oldestAt(): number | null {
    for (const entry of this.pending.values()) return entry.at;
    return null;
  }

  /** Bytes of segment files on disk. */
  get bytes(): number {
    return this.files.bytes;
  }

  /** For metrics (and the group-commit test): batches written so far, each one write and one fdatasync. */
  get batches(): number {
    return this.flushes;
  }

  /** Resolves once everything queued so far (appends and removals) is on disk; rejects with JournalWriteError("io") if a batch of it failed. */
  async flush(): Promise<void> {
    const inflight = this.running ? await this.running : true;
    const queued = this.queue.texts.length > 0 ? await this.drain() : true;
    if (!inflight || !queued) throw new JournalWriteError("io", `cairn could not write its journal in ${this.dir} (${causeText(this.lastError)}).`, { cause: this.lastError });
  }

  /** Flushes, closes files, releases the lock. Later appends reject with reason "closed". Never rejects. */
  close(): Promise<void> {
    this.closing ??= this.shut();
    return this.closing;
  }

  private async shut(): Promise<void> {
    // A failed batch's appends were rejected to their callers; a removal not written only means
    // its entry is replayed after a restart, and the caller dedupes by key.
    await this.flush().catch(() => undefined);
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.files.closeAll();
    await releaseLock(this.dir, this.real);
  }

  private queueRemoval(seq: number): void {
    const text = removalText(seq);
    this.queue.texts.push(text);
    this.queue.bytes += Buffer.byteLength(text);
    this.queue.removals.push(seq);
  }

  private schedule(): void {
    if (this.running || this.closed || this.queue.texts.length === 0) return;
    if (this.queue.bytes > BIG_BATCH && this.failures === 0) {
      void this.drain();
      return;
    }
    this.timer ??= setTimeout(() => void this.drain(), this.failures > 0 ? RETRY_MS : this.opts.batchMs);
  }

  /** Starts writing the queue as one batch (or returns the batch being written); resolves to whether it is on disk. */
  private drain(): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) return this.running;
    if (this.queue.texts.length === 0) return Promise.resolve(true);
    const batch = this.queue;
    this.queue = emptyBatch();
    this.inflightBytes = batch.bytes;
    this.running = this.write(batch).finally(() => {
      this.running = undefined;
      this.inflightBytes = 0;
      this.schedule();
    });
    return this.running;
  }

  private async write(batch: Batch): Promise<boolean> {
    this.flushes++;
    const data = Buffer.from(batch.texts.join(""), "utf8");
    const files = this.files;
    let segment = files.active;
    try {
      if (files.rotateNext || !segment.handle) segment = await files.rotate(batch.waiters[0]?.entry.seq ?? this.nextSeq);
      await appendDurably(segment.handle!, data);
    } catch (err) {
      this.failures++;
      this.lastError = err;
      const error = new JournalWriteError("io", `cairn could not write its journal in ${this.dir} (${causeText(err)}), so the event was not kept.`, { cause: err });
      for (const { reject } of batch.waiters) reject(error);
      // The removals wait for the next batch; the entries are not pending, whatever reached the file.
      for (const seq of batch.removals) this.queueRemoval(seq);
      await files.failed(segment);
      return false;
    }
    this.failures = 0;
    files.wrote(segment, data.length);
    for (const { entry, resolve } of batch.waiters) {
      this.pending.set(entry.seq, entry);
      files.hold(entry.seq, segment);
      resolve(entry);
    }
    for (const seq of batch.removals) files.release(seq);
    if (segment.bytes >= this.opts.segmentBytes) files.rotateNext = true;
    // Nothing pending on disk: rotate now, so every older file can go without waiting for an append.
    if (files.rotateNext && files.held === 0) await files.rotate(this.nextSeq).catch(() => undefined);
    await files.dropOld();
    return true;
  }
}

function definedOnly(opts: JournalOptions): JournalOptions {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as JournalOptions;
}
