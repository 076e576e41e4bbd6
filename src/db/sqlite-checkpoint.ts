/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * (a checkpoint) when the log passes its threshold, in whichever connection's commit crosses it,
 * and a checkpoint ends with fsync. better-sqlite3 is synchronous, so that commit blocks the whole
 * process: every few megabytes of writes, one turn would wait for the copy and the fsync.
 *
 * A worker thread with its own connection runs a PASSIVE checkpoint every interval (it never waits
 * for a lock and never blocks a writer); the main connection's own threshold is raised to a
 * backstop that only a stalled worker would let the log reach.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Pages of WAL after which the main connection checkpoints itself (4 KB pages: 40 MB). */
export const BACKSTOP_PAGES = 10_000;

// Plain CommonJS run by the worker: no TypeScript loader is involved, in sources or in the build.
const WORKER = `
const { workerData, parentPort } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0 });
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message ? err.message : err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, intervalMs: number, onError: (message: string) => void = () => {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER, { eval: true, workerData: { path, intervalMs, driver } });
  // It must not keep a process alive that has nothing else left to do.
  worker.unref();
  let stopped: Promise<void> | null = null;
  worker.on("message", (m: { error?: string }) => {
    if (m.error) onError(m.error);
  });
  worker.on("error", (err) => onError(err.message));
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        worker.once("exit", () => resolve());
        worker.once("message", () => void worker.terminate());
        worker.postMessage("stop");
      });
      return stopped;
    },
  };
}
