/**
 * The journal's segment files as a whole: which one is active, the bytes they take on disk, the
 * segment holding each pending entry's line, and when a file is made or deleted.
 */
import { unlink } from "node:fs/promises";
import { createSegment, syncDir, type Segment } from "./segment.ts";

export class SegmentFiles {
  /** The next batch goes to a new segment file (the active one is big enough, or may end torn). */
  rotateNext = false;
  private diskBytes: number;
  /** The number in the newest segment file's name: names only grow. */
  private lastFirst: number;

  /** `list`: oldest first, the last one active; `home`: the segment of each entry whose removal is not on disk. */
  constructor(
    private readonly dir: string,
    private readonly list: Segment[],
    private readonly home: Map<number, Segment>,
  ) {
    this.diskBytes = list.reduce((sum, s) => sum + s.bytes, 0);
    this.lastFirst = list.at(-1)?.first ?? 0;
  }

  get active(): Segment {
    return this.list.at(-1)!;
  }

  /** Bytes of segment files on disk. */
  get bytes(): number {
    return this.diskBytes;
  }

  /** Entries on disk whose removal is not. */
  get held(): number {
    return this.home.size;
  }

  /** `data` bytes are on disk at the end of `segment`. */
  wrote(segment: Segment, bytes: number): void {
    segment.bytes += bytes;
    this.diskBytes += bytes;
  }

  /** The entry `seq` is on disk in `segment`. */
  hold(seq: number, segment: Segment): void {
    this.home.set(seq, segment);
    segment.live++;
  }

  /** The removal record of `seq` is on disk. */
  release(seq: number): void {
    const segment = this.home.get(seq);
    if (segment) segment.live--;
    this.home.delete(seq);
  }

  /** Makes a new active segment; the old one's file stays until its entries are removed. */
  async rotate(first: number): Promise<Segment> {
    const old = this.active;
    this.lastFirst = Math.max(first, this.lastFirst + 1);
    const segment = await createSegment(this.dir, this.lastFirst);
    this.list.push(segment);
    this.rotateNext = false;
    await old.handle?.close().catch(() => undefined);
    old.handle = undefined;
    return segment;
  }

  /** A write to `segment` failed: count what reached the file, and if anything did, leave that file (it may end torn). */
  async failed(segment: Segment): Promise<void> {
    const size = await segment.handle?.stat().then(
      (s) => s.size,
      () => -1,
    );
    if (size === segment.bytes) return;
    if (size !== undefined && size > segment.bytes) this.wrote(segment, size - segment.bytes);
    this.rotateNext = true;
  }

  /** Deletes segment files oldest first while neither they nor any older one hold a pending entry; never the active one. */
  async dropOld(): Promise<void> {
    let dropped = false;
    while (this.list.length > 1 && this.list[0]!.live === 0) {
      const segment = this.list[0]!;
      try {
        await unlink(segment.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") break;
      }
      this.list.shift();
      this.diskBytes -= segment.bytes;
      dropped = true;
    }
    if (dropped) await syncDir(this.dir).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    for (const segment of this.list) {
      await segment.handle?.close().catch(() => undefined);
      segment.handle = undefined;
    }
  }
}
