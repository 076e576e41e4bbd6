/**
 * Group commit (src/ground/group-batch.ts): an item goes alone when nothing is under way, items
 * that arrive while batches are under way go together as the next batch, in arrival order, and
 * each item gets its own outcome.
 */
import { describe, expect, it } from "vitest";
import { GroupBatch, type Settled } from "../../src/ground/group-batch.ts";

/** A run whose batches end when the test says; records each batch it was given. */
function gatedRun() {
  const batches: number[][] = [];
  const open: (() => void)[] = [];
  const run = async (items: readonly number[]): Promise<Settled<string>[]> => {
    batches.push([...items]);
    await new Promise<void>((go) => open.push(go));
    return items.map((n) => (n < 0 ? { ok: false, error: new Error(`refused ${n}`) } : { ok: true, value: `stored ${n}` }));
  };
  const releaseAll = async (): Promise<void> => {
    while (open.length) open.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { run, batches, releaseAll };
}

describe("GroupBatch", () => {
  it("sends an item at once and alone when nothing is under way", async () => {
    const g = gatedRun();
    const batch = new GroupBatch(g.run, { maxItems: 10, maxInFlight: 1 });
    const one = batch.add(1);
    expect(g.batches).toEqual([[1]]);
    await g.releaseAll();
    await expect(one).resolves.toBe("stored 1");
  });

  it("gathers what arrives while a batch is under way into the next, in arrival order", async () => {
    const g = gatedRun();
    const batch = new GroupBatch(g.run, { maxItems: 3, maxInFlight: 1 });
    const all = [1, 2, 3, 4, 5, 6].map((n) => batch.add(n));
    expect(g.batches).toEqual([[1]]);
    await g.releaseAll();
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
    await g.releaseAll();
    await g.releaseAll();
    expect(g.batches).toEqual([[1], [2, 3, 4], [5, 6]]);
    await expect(Promise.all(all)).resolves.toEqual(["stored 1", "stored 2", "stored 3", "stored 4", "stored 5", "stored 6"]);
  });

  it("keeps up to maxInFlight batches under way", async () => {
    const g = gatedRun();
    const batch = new GroupBatch(g.run, { maxItems: 10, maxInFlight: 2 });
    const all = [1, 2, 3, 4].map((n) => batch.add(n));
    expect(g.batches).toEqual([[1], [2]]);
    await g.releaseAll();
    expect(g.batches).toEqual([[1], [2], [3, 4]]);
    await g.releaseAll();
    await expect(Promise.all(all)).resolves.toHaveLength(4);
  });

  it("settles each item on its own: one refused does not fail its neighbours", async () => {
    const g = gatedRun();
    const batch = new GroupBatch(g.run, { maxItems: 10, maxInFlight: 1 });
    const first = batch.add(1);
    const rest = Promise.allSettled([batch.add(2), batch.add(-3), batch.add(4)]);
    await g.releaseAll();
    await g.releaseAll();
    await expect(first).resolves.toBe("stored 1");
    const [a, b, c] = await rest;
    expect(a).toEqual({ status: "fulfilled", value: "stored 2" });
    expect(b).toMatchObject({ status: "rejected", reason: new Error("refused -3") });
    expect(c).toEqual({ status: "fulfilled", value: "stored 4" });
  });

  it("fails every item of a batch that throws, and goes on with the next", async () => {
    let calls = 0;
    const batch = new GroupBatch<number, number>(
      async (items) => {
        calls++;
        if (calls === 1) throw new Error("database gone");
        return items.map((n) => ({ ok: true, value: n * 10 }));
      },
      { maxItems: 10, maxInFlight: 1 },
    );
    const [lost, next] = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(lost).toMatchObject({ status: "rejected", reason: new Error("database gone") });
    expect(next).toEqual({ status: "fulfilled", value: 20 });
  });

  it("rejects items a run forgot to settle instead of leaving them waiting", async () => {
    const batch = new GroupBatch<number, number>(async () => [], { maxItems: 10, maxInFlight: 1 });
    await expect(batch.add(1)).rejects.toThrow("settled only 0");
  });

  describe("with gather (SQLite: a run that never waits)", () => {
    /** A run that settles at once, as a synchronous database's does; records each batch. */
    function syncRun() {
      const batches: number[][] = [];
      const run = async (items: readonly number[]): Promise<Settled<string>[]> => {
        batches.push([...items]);
        return items.map((n) => ({ ok: true, value: `stored ${n}` }));
      };
      return { run, batches };
    }

    it("sends everything added before gather calls back as one batch, in arrival order", async () => {
      const r = syncRun();
      const batch = new GroupBatch(r.run, { maxItems: 10, maxInFlight: 1, gather: setImmediate });
      const all = [1, 2, 3].map((n) => batch.add(n));
      // Added from other continuations of the same turn of the event loop.
      await Promise.resolve();
      all.push(batch.add(4));
      expect(r.batches).toEqual([]);
      await expect(Promise.all(all)).resolves.toEqual(["stored 1", "stored 2", "stored 3", "stored 4"]);
      expect(r.batches).toEqual([[1, 2, 3, 4]]);
    });

    it("sends a lone item by itself at the next turn, and what comes later as a batch of its own", async () => {
      const r = syncRun();
      const batch = new GroupBatch(r.run, { maxItems: 10, maxInFlight: 1, gather: setImmediate });
      await expect(batch.add(1)).resolves.toBe("stored 1");
      expect(r.batches).toEqual([[1]]);
      await expect(Promise.all([batch.add(2), batch.add(3)])).resolves.toEqual(["stored 2", "stored 3"]);
      expect(r.batches).toEqual([[1], [2, 3]]);
    });

    it("splits what was gathered into batches of maxItems", async () => {
      const r = syncRun();
      const batch = new GroupBatch(r.run, { maxItems: 2, maxInFlight: 1, gather: setImmediate });
      await Promise.all([1, 2, 3, 4, 5].map((n) => batch.add(n)));
      expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
    });
  });
});
