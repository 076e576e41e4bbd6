/**
 * Who holds a turn lease, written so that a process can tell when the holder is a process of its
 * own machine that no longer runs: a `kill -9` and a restart on one host (the usual single-process
 * deployment) then resume the lost turns at once instead of after the lease.
 *
 * The owner is `<host>/<pid namespace>:<pid>:<random>`. The pid namespace is part of the machine
 * key because containers can share a host name (`--network host`) yet not see each other's
 * processes: a pid is only judged where it is visible. The random part tells two processes apart
 * that had the same pid (pids repeat across restarts).
 */
import { randomUUID } from "node:crypto";
import { readlinkSync } from "node:fs";
import { hostname } from "node:os";

/** This machine's key: the host name and, on Linux, the pid namespace's inode. */
export function machineKey(): string {
  let ns = "";
  try {
    // "pid:[4026531836]"
    ns = readlinkSync("/proc/self/ns/pid").replace(/^pid:\[(\d+)\]$/, "$1");
  } catch {
    // Not Linux, or /proc hidden: the host name alone.
  }
  return ns ? `${hostname()}/${ns}` : hostname();
}

export function newOwner(machine = machineKey(), pid = process.pid): string {
  return `${machine}:${pid}:${randomUUID().slice(0, 8)}`;
}

/** The machine and pid of an owner string; null for one not written by `newOwner`. */
export function parseOwner(owner: string): { machine: string; pid: number } | null {
  const m = /^(.+):(\d+):[0-9a-f]{8}$/.exec(owner);
  return m ? { machine: m[1]!, pid: Number(m[2]) } : null;
}

/** Whether a process with this pid runs here (one of another user counts: it exists). */
export function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether `owner` is certainly dead: a process of this machine whose pid no longer runs. Anything
 * else (another machine, an unparsable owner, a pid in use, possibly by another program now) is
 * left to its lease's expiry.
 */
export function deadHere(owner: string, machine = machineKey(), runs: (pid: number) => boolean = pidRuns): boolean {
  const parsed = parseOwner(owner);
  return parsed !== null && parsed.machine === machine && parsed.pid !== process.pid && !runs(parsed.pid);
}
