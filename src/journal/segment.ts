/**
 * The journal's segment files: `segment-000000000001.jsonl`, named by (at least) the first seq they
 * hold, zero-padded so names sort in the order the files were made. One JSON object a line: an entry
 * `{"s":seq,"p":platform,"k":key,"t":at,"d":payload}` or a removal `{"x":seq}`.
 */
import { open, readdir, readFile, stat, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";

export interface JournalEntry {
  readonly seq: number;
  readonly platform: string;
  readonly key: string;
  readonly at: number;
  readonly payload: unknown;
}

/** One segment file as the journal tracks it. */
export interface Segment {
  /** The number in its name. */
  readonly first: number;
  readonly path: string;
  /** Its size on disk. */
  bytes: number;
  /** Entries whose line is in this file and whose removal is not yet on disk. */
  live: number;
  /** Open for appending: the active segment only. */
  handle?: FileHandle;
}

const NAME = /^segment-(\d{12})\.jsonl$/;

export function segmentName(first: number): string {
  return `segment-${String(first).padStart(12, "0")}.jsonl`;
}

const seqSchema = z.number().int().positive();
const entryLine = z.object({ s: seqSchema, p: z.string(), k: z.string(), t: z.number(), d: z.unknown().optional() });
const removalLine = z.object({ x: seqSchema });
export type Line = { entry: JournalEntry } | { removed: number };

export function entryText(e: JournalEntry): string {
  return `${JSON.stringify({ s: e.seq, p: e.platform, k: e.key, t: e.at, d: e.payload })}\n`;
}

export function removalText(seq: number): string {
  return `${JSON.stringify({ x: seq })}\n`;
}

/** A line read back from disk, or null when it does not parse or validate (a torn tail). */
function parseLine(text: string): Line | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const entry = entryLine.safeParse(json);
  if (entry.success) {
    const { s, p, k, t, d } = entry.data;
    return { entry: { seq: s, platform: p, key: k, at: t, payload: d } };
  }
  const removal = removalLine.safeParse(json);
  return removal.success ? { removed: removal.data.x } : null;
}

/** The segment files in `dir`, oldest first, with their lines up to the first that does not parse. */
export async function readSegments(dir: string): Promise<Array<{ segment: Segment; lines: Line[] }>> {
  const names = (await readdir(dir)).filter((n) => NAME.test(n)).sort();
  const out: Array<{ segment: Segment; lines: Line[] }> = [];
  for (const name of names) {
    const path = join(dir, name);
    if (!(await stat(path)).isFile()) continue;
    const data = await readFile(path);
    const lines: Line[] = [];
    const texts = data.toString("utf8").split("\n");
    // The text after the last newline is empty, or a line whose write did not finish.
    texts.pop();
    for (const text of texts) {
      const line = parseLine(text);
      if (!line) break;
      lines.push(line);
    }
    out.push({ segment: { first: Number(NAME.exec(name)![1]), path, bytes: data.length, live: 0 }, lines });
  }
  return out;
}

/**
 * What the segment files say, read in order: the entries never removed (in seq order), the segment
 * holding each one's line (each segment's `live` counted), and the highest seq seen.
 */
export function replay(found: Array<{ segment: Segment; lines: Line[] }>): { pending: JournalEntry[]; home: Map<number, Segment>; maxSeq: number } {
  const pending = new Map<number, JournalEntry>();
  const home = new Map<number, Segment>();
  let maxSeq = 0;
  for (const { segment, lines } of found) {
    for (const line of lines) {
      if ("entry" in line) {
        const { entry } = line;
        maxSeq = Math.max(maxSeq, entry.seq);
        if (home.has(entry.seq)) continue;
        pending.set(entry.seq, entry);
        home.set(entry.seq, segment);
        segment.live++;
      } else {
        // A removal record can be in a later segment than its entry.
        maxSeq = Math.max(maxSeq, line.removed);
        const at = home.get(line.removed);
        if (at) at.live--;
        home.delete(line.removed);
        pending.delete(line.removed);
      }
    }
  }
  return { pending: [...pending.values()].sort((a, b) => a.seq - b.seq), home, maxSeq };
}

/** Makes a file's creation or deletion in `dir` durable; platforms that cannot fsync a folder are let be. */
export async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM") throw err;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Creates the segment file (it must not exist) open for appending, and makes it durable. */
export async function createSegment(dir: string, first: number): Promise<Segment> {
  const path = join(dir, segmentName(first));
  const handle = await open(path, "ax");
  try {
    await syncDir(dir);
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
  return { first, path, bytes: 0, live: 0, handle };
}

/** Writes all of `data` at the end of the file, then fdatasyncs it. */
export async function appendDurably(handle: FileHandle, data: Buffer): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await handle.write(data, done, data.length - done, null);
    done += bytesWritten;
  }
  await handle.datasync();
}
