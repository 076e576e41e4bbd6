/**
 * The journal folder's lock: a file `LOCK` holding the pid of the process using the folder, plus the
 * folders open in this process. One journal folder has one writer, or seqs and segment files clash.
 */
import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { JournalOpenError, unwritable } from "./errors.ts";

/** Real paths (symbolic links resolved) of the journal folders open in this process. */
const openHere = new Set<string>();

const LOCK = "LOCK";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

function inUse(dir: string, pid: number | null): JournalOpenError {
  return new JournalOpenError(`another cairn process (pid ${pid ?? "unknown"}) is using the journal folder ${dir}; give each replica its own CAIRN_JOURNAL_DIR.`);
}

/** The pid a LOCK file names, or null when it names none (empty, torn, unreadable). */
async function lockPid(path: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(path, "utf8")).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Claims `dir` (an existing folder, as an absolute path; `real` is its real path) for this process. A
 * LOCK left by a process that is gone (a kill -9, or a container whose pid this process now has) is
 * taken over.
 */
export async function takeLock(dir: string, real: string): Promise<void> {
  if (openHere.has(real)) throw new JournalOpenError(`the journal folder ${dir} is already open in this process; give each journal its own CAIRN_JOURNAL_DIR.`);
  openHere.add(real);
  const path = join(dir, LOCK);
  try {
    // Twice at most: a stale lock is removed, then created again with "wx" so that two processes
    // taking over the same stale lock cannot both win.
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(path, `${process.pid}\n`, { flag: "wx" });
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw err;
      }
      const pid = await lockPid(path);
      if (pid !== null && pid !== process.pid && alive(pid)) throw inUse(dir, pid);
      await unlink(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    }
  } catch (err) {
    openHere.delete(real);
    if (err instanceof JournalOpenError) throw err;
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw inUse(dir, await lockPid(path));
    }
    throw unwritable(dir, err);
  }
}

/** Gives `dir` up: deletes LOCK (best effort) and frees the folder for this process. */
export async function releaseLock(dir: string, real: string): Promise<void> {
  try {
    await unlink(join(dir, LOCK));
  } catch {
    // Gone already, or the folder went away: a later open takes a stale lock over anyway.
  } finally {
    openHere.delete(real);
  }
}
