/**
 * WAL checkpoints run in a background worker (src/db/sqlite-checkpoint.ts), not in whichever commit
 * crosses SQLite's threshold: the log is copied back between writes, so the next write starts the
 * log over instead of growing it, and closing the database stops the worker.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.ts";

const dir = mkdtempSync(join(tmpdir(), "cairn-wal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("keeps the write-ahead log from growing past one burst of writes, and stops with the database", async () => {
  const path = join(dir, "wal.db");
  const db = await openDatabase(`file:${path}`, { checkpointIntervalMs: 20 });
  const walBytes = () => statSync(`${path}-wal`).size;
  // One statement, so one transaction: a checkpoint cannot land in the middle of a burst.
  const burst = (tag: string) =>
    db.prisma.workspace.createMany({ data: Array.from({ length: 40 }, (_, i) => ({ platform: "slack", externalId: `${tag}-${i}`, name: "x".repeat(20_000) })) });
  await burst("a");
  const afterFirst = walBytes();
  expect(afterFirst).toBeGreaterThan(800_000);
  // Once the worker has copied the log back (every 20 ms; a second is ample on a busy machine),
  // the next burst reuses it from the start.
  await new Promise((r) => setTimeout(r, 1_000));
  await burst("b");
  // Without the worker (SQLite's own threshold is raised to 40 MB) the log would hold both bursts.
  expect(walBytes()).toBeLessThan(afterFirst * 1.2);
  expect(await db.prisma.workspace.count()).toBe(80);
  await db.close();
});
