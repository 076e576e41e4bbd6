import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, open as openFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileJournal, JournalOpenError, JournalWriteError, type JournalEntry, type JournalOptions } from "../../src/journal/file-journal.ts";
import { PROJECT_ROOT } from "../../src/ground/paths.ts";

const temps: string[] = [];
const opened: FileJournal[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cairn-journal-"));
  temps.push(dir);
  return dir;
}

async function open(dir: string, opts?: JournalOptions): Promise<{ journal: FileJournal; pending: JournalEntry[] }> {
  const got = await FileJournal.open(dir, opts);
  opened.push(got.journal);
  return got;
}

afterEach(async () => {
  for (const journal of opened.splice(0)) await journal.close();
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

const segmentFiles = (dir: string): string[] => readdirSync(dir).filter((n) => /^segment-\d{12}\.jsonl$/.test(n)).sort();
const bytesOnDisk = (dir: string): number => segmentFiles(dir).reduce((sum, n) => sum + statSync(join(dir, n)).size, 0);

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/** A child process's pid once it has exited: a pid no live process has. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((r) => child.once("exit", r));
  return child.pid!;
}

describe("FileJournal", () => {
  it("gives back after a restart exactly the entries not removed, and continues their seqs", async () => {
    const dir = await tempDir();
    let clock = 1_000;
    const now = () => clock++;
    const first = await open(dir, { now });
    expect(first.pending).toEqual([]);
    const a = await first.journal.append("slack", "ev-a", { text: "hello", n: 1 });
    const b = await first.journal.append("discord", "ev-b", ["x", 2]);
    const c = await first.journal.append("slack", "ev-c", null);
    expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
    first.journal.remove(b.seq);
    first.journal.remove(b.seq); // idempotent
    first.journal.remove(99); // unknown: ignored
    expect(first.journal.depth).toBe(2);
    await first.journal.close();

    const second = await open(dir, { now });
    expect(second.pending).toEqual([
      { seq: 1, platform: "slack", key: "ev-a", at: 1_000, payload: { text: "hello", n: 1 } },
      { seq: 3, platform: "slack", key: "ev-c", at: 1_002, payload: null },
    ]);
    expect(second.journal.depth).toBe(2);
    expect(second.journal.oldestAt).toBe(1_000);
    const d = await second.journal.append("slack", "ev-d", { late: true });
    expect(d.seq).toBeGreaterThanOrEqual(4);
    expect(second.journal.depth).toBe(3);
    // A removal written in a later segment than its entry still counts after the next restart.
    second.journal.remove(1);
    expect(second.journal.oldestAt).toBe(1_002);
    await second.journal.close();

    const third = await open(dir, { now });
    expect(third.pending.map((e) => [e.seq, e.key])).toEqual([
      [3, "ev-c"],
      [d.seq, "ev-d"],
    ]);
    third.journal.remove(3);
    third.journal.remove(d.seq);
    await third.journal.flush();
    expect(third.journal.depth).toBe(0);
    expect(third.journal.oldestAt).toBeNull();
  });

  it("writes appends issued together in a few batches (group commit)", async () => {
    const dir = await tempDir();
    const { journal } = await open(dir);
    expect(journal.batches).toBe(0);
    const entries = await Promise.all(Array.from({ length: 50 }, (_, i) => journal.append("slack", `k${i}`, { i })));
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(journal.batches).toBeGreaterThanOrEqual(1);
    expect(journal.batches).toBeLessThanOrEqual(2);
    expect(journal.depth).toBe(50);
    expect(journal.bytes).toBe(bytesOnDisk(dir));
    await journal.close();
    const again = await open(dir);
    expect(again.pending.map((e) => e.payload)).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
  });

  it("ignores a torn last line left by a crash, and keeps the entries before it", async () => {
    const dir = await tempDir();
    const first = await open(dir);
    for (let i = 0; i < 3; i++) await first.journal.append("slack", `k${i}`, { i });
    await first.journal.close();
    appendFileSync(join(dir, segmentFiles(dir).at(-1)!), '{"s":9,"p":');

    const second = await open(dir);
    expect(second.pending.map((e) => [e.seq, e.key, e.payload])).toEqual([
      [1, "k0", { i: 0 }],
      [2, "k1", { i: 1 }],
      [3, "k2", { i: 2 }],
    ]);
    // Later appends go to a new segment, not after the torn line, so they are read back too.
    const next = await second.journal.append("slack", "k3", { i: 3 });
    await second.journal.close();
    const third = await open(dir);
    expect(third.pending.map((e) => e.seq)).toEqual([1, 2, 3, next.seq]);
  });

  it("rotates segment files and deletes them once all their entries are removed", async () => {
    const dir = await tempDir();
    const first = await open(dir, { segmentBytes: 200 });
    const entries: JournalEntry[] = [];
    for (let i = 0; i < 20; i++) entries.push(await first.journal.append("slack", `key-${i}`, { i }));
    expect(segmentFiles(dir).length).toBeGreaterThanOrEqual(4);
    expect(first.journal.bytes).toBe(bytesOnDisk(dir));
    for (const e of entries) first.journal.remove(e.seq);
    await first.journal.flush();
    expect(first.journal.depth).toBe(0);
    expect(segmentFiles(dir)).toHaveLength(1);
    expect(first.journal.bytes).toBe(bytesOnDisk(dir));
    const last = await first.journal.append("discord", "last", { last: true });
    await first.journal.close();
    expect(segmentFiles(dir)).toHaveLength(1);
    expect(readdirSync(dir)).not.toContain("LOCK");

    const second = await open(dir, { segmentBytes: 200 });
    expect(second.pending).toEqual([last]);
  });

  it("refuses appends past maxBytes as full, keeps the earlier ones, and accepts again once segments go", async () => {
    const dir = await tempDir();
    const opts = { maxBytes: 600, segmentBytes: 200 };
    const first = await open(dir, opts);
    const kept: JournalEntry[] = [];
    let full: unknown;
    for (let i = 0; i < 30 && !full; i++) {
      try {
        kept.push(await first.journal.append("slack", `key-${i}`, { i, text: "some words" }));
      } catch (err) {
        full = err;
      }
    }
    expect(full).toBeInstanceOf(JournalWriteError);
    expect((full as JournalWriteError).reason).toBe("full");
    expect((full as Error).message).toContain("CAIRN_JOURNAL_MAX_BYTES");
    expect((full as Error).message).toContain("600 bytes");
    expect(kept.length).toBeGreaterThan(3);
    expect(first.journal.bytes).toBeLessThanOrEqual(600);
    expect(first.journal.depth).toBe(kept.length);
    await first.journal.close();

    const second = await open(dir, opts);
    expect(second.pending).toEqual(kept);
    for (const e of kept) second.journal.remove(e.seq);
    await second.journal.flush();
    expect(segmentFiles(dir)).toHaveLength(1);
    expect(second.journal.bytes).toBe(bytesOnDisk(dir));
    expect(second.journal.bytes).toBeLessThan(200);
    const after = await second.journal.append("slack", "after", { ok: true });
    await second.journal.close();

    const third = await open(dir, opts);
    expect(third.pending).toEqual([after]);
  });

  it("counts appends queued but not yet written against maxBytes", async () => {
    const dir = await tempDir();
    const { journal } = await open(dir, { maxBytes: 600 });
    const burst = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => journal.append("slack", `burst-${i}`, { i, text: "some words" })));
    const kept = burst.filter((r) => r.status === "fulfilled");
    const refused = burst.filter((r) => r.status === "rejected");
    expect(kept.length).toBeGreaterThan(3);
    expect(refused.length).toBeGreaterThan(3);
    expect(refused.every((r) => r.reason instanceof JournalWriteError && r.reason.reason === "full")).toBe(true);
    expect(journal.bytes).toBe(bytesOnDisk(dir));
    expect(journal.bytes).toBeLessThanOrEqual(600);
    expect(journal.depth).toBe(kept.length);
  });

  it("refuses a folder it cannot write with one sentence naming the folder and CAIRN_JOURNAL_DIR", async () => {
    const tmp = await tempDir();
    writeFileSync(join(tmp, "file.txt"), "not a folder");
    const dir = join(tmp, "file.txt", "journal");
    const err = await rejection(FileJournal.open(dir));
    expect(err).toBeInstanceOf(JournalOpenError);
    const message = (err as Error).message;
    expect(message).toContain(dir);
    expect(message).toContain("CAIRN_JOURNAL_DIR");
    expect(message).toContain("ENOTDIR: not a folder");
    expect(message).not.toContain("\n");
    expect(message).not.toMatch(/\bat .*:\d+:\d+/);
  });

  it("locks the folder: once per process, a dead process's lock taken over, a live one's refused", async () => {
    const dir = await tempDir();
    const first = await open(dir);
    const twice = await rejection(FileJournal.open(dir));
    expect(twice).toBeInstanceOf(JournalOpenError);
    expect((twice as Error).message).toContain(dir);
    const link = join(await tempDir(), "link");
    symlinkSync(dir, link);
    expect(await rejection(FileJournal.open(link))).toBeInstanceOf(JournalOpenError);
    expect(readFileSync(join(dir, "LOCK"), "utf8").trim()).toBe(String(process.pid));
    await first.journal.append("slack", "k1", 1);
    await first.journal.close();
    expect(readdirSync(dir)).not.toContain("LOCK");

    const gone = await deadPid();
    writeFileSync(join(dir, "LOCK"), `${gone}\n`);
    const second = await open(dir);
    expect(second.pending.map((e) => e.key)).toEqual(["k1"]);
    expect(readFileSync(join(dir, "LOCK"), "utf8").trim()).toBe(String(process.pid));
    await second.journal.close();

    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 10000)"]);
    try {
      await new Promise((r) => live.once("spawn", r));
      writeFileSync(join(dir, "LOCK"), `${live.pid}\n`);
      const err = await rejection(FileJournal.open(dir));
      expect(err).toBeInstanceOf(JournalOpenError);
      const message = (err as Error).message;
      expect(message).toContain(`pid ${live.pid}`);
      expect(message).toContain(dir);
      expect(message).toContain("CAIRN_JOURNAL_DIR");
      expect(message).not.toContain("\n");
      expect(readFileSync(join(dir, "LOCK"), "utf8").trim()).toBe(String(live.pid));
    } finally {
      live.kill("SIGKILL");
      await new Promise((r) => live.once("exit", r));
    }
    // The refused open left this process free to open the folder once its owner is gone.
    const third = await open(dir);
    expect(third.pending.map((e) => e.key)).toEqual(["k1"]);
  });

  it("keeps every resolved append through a kill -9", async () => {
    const dir = await tempDir();
    mkdirSync(dir, { recursive: true });
    const script = [
      `import { FileJournal } from ${JSON.stringify(join(PROJECT_ROOT, "src/journal/file-journal.ts"))};`,
      `const { journal } = await FileJournal.open(${JSON.stringify(dir)}, { segmentBytes: 2000 });`,
      `await Promise.all(Array.from({ length: 50 }, (_, i) => journal.append("slack", "k" + i, { i })));`,
      `for (let i = 50; i < 100; i++) await journal.append("discord", "k" + i, { i });`,
      `process.stdout.write("ok\\n");`,
      `setInterval(() => {}, 1000);`,
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: PROJECT_ROOT });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((r) => child.once("exit", r));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("ok")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`child exited (${code}) before ok: ${stderr}`)));
      });
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    expect(segmentFiles(dir).length).toBeGreaterThan(1);

    const { journal, pending } = await open(dir);
    expect(pending).toHaveLength(100);
    expect(pending.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(pending.map((e) => e.key)).toEqual(Array.from({ length: 100 }, (_, i) => `k${i}`));
    expect(pending.map((e) => e.payload)).toEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
    expect(journal.depth).toBe(100);
  });

  it("rejects the appends of a batch the disk refused with reason io, and retries its removals", async () => {
    const dir = await tempDir();
    const { journal } = await open(dir);
    const e1 = await journal.append("slack", "k1", 1);
    // fdatasync failing, as on a disk error: FileHandle's class is reached through a handle.
    const probe = await openFile(join(dir, segmentFiles(dir)[0]!), "r");
    const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    const datasync = vi.spyOn(proto, "datasync").mockRejectedValueOnce(eio);
    try {
      const err = await rejection(journal.append("slack", "k2", 2));
      expect(err).toBeInstanceOf(JournalWriteError);
      expect((err as JournalWriteError).reason).toBe("io");
      expect((err as Error).message).toContain("EIO");
      expect((err as Error).message).toContain(dir);
      expect(journal.depth).toBe(1);
      datasync.mockRejectedValueOnce(eio);
      journal.remove(e1.seq);
      expect(journal.depth).toBe(0);
      expect(((await rejection(journal.flush())) as JournalWriteError).reason).toBe("io");
    } finally {
      datasync.mockRestore();
    }
    // The removal was queued again: this flush writes it, and the files it frees go.
    await journal.flush();
    const e3 = await journal.append("slack", "k3", 3);
    expect(segmentFiles(dir)).toHaveLength(1);
    await journal.close();
    const again = await open(dir);
    expect(again.pending).toEqual([e3]);
  });

  it("rejects appends after close with reason closed", async () => {
    const dir = await tempDir();
    const { journal } = await open(dir);
    const kept = journal.append("slack", "before", { n: 1 });
    await journal.close();
    // An append made before close was flushed by it.
    expect((await kept).key).toBe("before");
    const err = await rejection(journal.append("slack", "after", { n: 2 }));
    expect(err).toBeInstanceOf(JournalWriteError);
    expect((err as JournalWriteError).reason).toBe("closed");
    expect(() => journal.remove(1)).not.toThrow();
    await journal.close(); // twice is fine
    const again = await open(dir);
    expect(again.pending.map((e) => e.key)).toEqual(["before"]);
  });
});
