import { describe, expect, it } from "vitest";
import { KeyedQueue } from "../../src/ground/keyed-queue.ts";

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

describe("KeyedQueue", () => {
  it("runs jobs of one key strictly in order, even when earlier ones are slower or fail", async () => {
    const q = new KeyedQueue(4);
    const order: string[] = [];
    const jobs = [
      q.run("a", async () => {
        await tick(30);
        order.push("a1");
      }),
      q.run("a", async () => {
        order.push("a2");
        throw new Error("boom");
      }),
      q.run("a", async () => {
        order.push("a3");
      }),
    ];
    await Promise.allSettled(jobs);
    expect(order).toEqual(["a1", "a2", "a3"]);
    await expect(jobs[1]).rejects.toThrow("boom");
    expect(q.activeKeys).toBe(0);
  });

  it("runs different keys concurrently, never more than the limit at once", async () => {
    const q = new KeyedQueue(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        q.run(`k${i}`, async () => {
          running++;
          peak = Math.max(peak, running);
          await tick(10);
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
  });

  it("tells whether a key has queued or running work, until its last job settles", async () => {
    const q = new KeyedQueue(1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = q.run("a", () => held);
    const second = q.run("a", async () => "done");
    expect([q.busy("a"), q.busy("b")]).toEqual([true, false]);
    release();
    await first;
    expect(q.busy("a")).toBe(true);
    expect(await second).toBe("done");
    await tick(0);
    expect(q.busy("a")).toBe(false);
  });

  it("refuses a non-positive limit", () => {
    expect(() => new KeyedQueue(0)).toThrow(/positive integer/);
  });
});
