/**
 * The workspace's search figures: counted once, served fresh, then served stale while one new count
 * runs, and waited for only when too old.
 */
import { describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { collectionStats, STATS_FRESH_MS, STATS_MAX_AGE_MS } from "../../src/history/store/collection-stats.ts";

describe("collection stats", () => {
  it("counts once, serves a stale count while one recount runs, and waits only past the maximum age", async () => {
    const db = {} as Database;
    let counts = 0;
    let release: () => void = () => {};
    const count = async () => {
      counts++;
      if (counts === 2) await new Promise<void>((r) => (release = r));
      return { docs: counts * 100, avgChars: 10, sessions: counts };
    };
    const t0 = Date.now();
    expect((await collectionStats(db, "W", count, t0)).docs).toBe(100);
    expect((await collectionStats(db, "W", count, t0 + STATS_FRESH_MS - 1)).docs).toBe(100);
    expect(counts).toBe(1);
    // Stale: the last count serves at once; one recount runs, however many searches come meanwhile.
    expect((await collectionStats(db, "W", count, t0 + STATS_FRESH_MS + 1)).docs).toBe(100);
    expect((await collectionStats(db, "W", count, t0 + STATS_FRESH_MS + 2)).docs).toBe(100);
    expect(counts).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect((await collectionStats(db, "W", count)).docs).toBe(200);
    // Another workspace has its own figures.
    expect((await collectionStats(db, "V", count)).docs).toBe(300);
    // Past the maximum age a search waits for a new count.
    expect((await collectionStats(db, "V", count, Date.now() + STATS_MAX_AGE_MS + 1)).docs).toBe(400);
  });

  it("keeps the last count when a recount fails, and tries again on a later search", async () => {
    const db = {} as Database;
    let n = 0;
    const t0 = Date.now();
    await collectionStats(db, "W", async () => ({ docs: ++n, avgChars: 1, sessions: 1 }), t0);
    const failing = async () => {
      n++;
      throw new Error("database away");
    };
    expect((await collectionStats(db, "W", failing, t0 + STATS_FRESH_MS + 1)).docs).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect((await collectionStats(db, "W", async () => ({ docs: 42, avgChars: 1, sessions: 1 }), t0 + STATS_FRESH_MS + 2)).docs).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect((await collectionStats(db, "W", failing)).docs).toBe(42);
  });
});
