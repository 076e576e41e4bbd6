/**
 * The house's rules fail on a deliberate violation: scripts/check-house.mjs (run by npm run check)
 * against a tree that breaks each rule once (test/fixtures/house/src), and against the same tree with
 * those violations listed as known.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const script = resolve("scripts/check-house.mjs");
const fixture = resolve("test/fixtures/house");

async function check(...extra: string[]): Promise<{ code: number; lines: string[] }> {
  try {
    const { stdout } = await run(process.execPath, [script, "--root", fixture, ...extra]);
    return { code: 0, lines: stdout.trim().split("\n") };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, lines: e.stdout.trim().split("\n") };
  }
}

const BROKEN = [
  "folder-cycle: alpha -> beta",
  "folder-cycle: beta -> alpha",
  "ground-imports-nothing-above: src/ground/types.ts -> src/core/turn.ts",
  "no-runtime-cycle: src/memory/pending.ts -> src/memory/queue.ts",
  "nothing-imports-the-top: src/core/turn.ts -> src/app/wiring.ts",
  "only-stores-reach-the-database: src/learning/review.ts -> src/db/client.ts",
  "platforms-know-no-database: src/platforms/slack/adapter.ts -> src/memory/store.ts",
  "platforms-stay-apart: src/platforms/slack/adapter.ts -> src/platforms/discord/gateway.ts",
];

describe("the house's rules", () => {
  it("fail on each deliberate violation, and only on those (a store may reach the database)", async () => {
    const { code, lines } = await check();
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith("✗ ")).map((l) => l.slice(2))).toEqual(BROKEN);
  }, 60_000);

  it("pass when the violations are listed as known, and fail when a listed one is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "house-"));
    const known = join(dir, "known.json");
    writeFileSync(known, JSON.stringify({ known: BROKEN }));
    expect((await check("--known", known)).code).toBe(0);

    const stale = "only-stores-reach-the-database: src/learning/gone.ts -> src/db/client.ts";
    writeFileSync(known, JSON.stringify({ known: [...BROKEN, stale] }));
    const { code, lines } = await check("--known", known);
    expect(code).toBe(1);
    expect(lines).toContain(`✗ fixed, take it off ${known}: ${stale}`);
  }, 60_000);
});
