/**
 * Cached SQLite statements (src/db/sqlite-statements.ts): each statement shape is compiled once, and
 * a reused statement still runs with each call's own arguments, reads and writes alike, inside and
 * outside transactions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";

let dir: string;
let db: Database;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cairn-stmt-"));
  db = await openDatabase(`file:${join(dir, "test.db")}`);
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

it("compiles a statement once and runs it with each call's arguments", async () => {
  const p = db.prisma;
  const compile = vi.spyOn(BetterSqlite3.prototype, "prepare");
  try {
    const names = ["alpha", "beta", "gamma"];
    for (const externalId of names) await p.workspace.create({ data: { platform: "slack", externalId } });
    for (const externalId of names) expect((await p.workspace.findUnique({ where: { platform_externalId: { platform: "slack", externalId } } }))?.externalId).toBe(externalId);
    expect(await p.workspace.findUnique({ where: { platform_externalId: { platform: "slack", externalId: "missing" } } })).toBeNull();
    const rows = await p.$queryRawUnsafe<{ externalId: string }[]>(`SELECT externalId FROM "Workspace" WHERE externalId IN (?, ?) ORDER BY externalId`, "gamma", "alpha");
    expect(rows.map((r) => r.externalId)).toEqual(["alpha", "gamma"]);
    // Three creates, four look-ups and one raw query: three statement shapes, each compiled once.
    expect(compile.mock.calls.length).toBeLessThanOrEqual(3);
  } finally {
    compile.mockRestore();
  }
});

it("keeps transactions working: a rolled-back write is gone, a committed one stays", async () => {
  const p = db.prisma;
  await expect(
    p.$transaction(async (tx) => {
      await tx.workspace.create({ data: { platform: "discord", externalId: "rolled-back" } });
      throw new Error("abort");
    }),
  ).rejects.toThrow("abort");
  await p.$transaction(async (tx) => {
    await tx.workspace.create({ data: { platform: "discord", externalId: "kept" } });
  });
  const found = await p.workspace.findMany({ where: { platform: "discord" }, select: { externalId: true } });
  expect(found.map((w) => w.externalId)).toEqual(["kept"]);
  const changed = await p.workspace.updateMany({ where: { platform: "discord" }, data: { name: "Kept" } });
  expect(changed.count).toBe(1);
});
