/**
 * Slots (src/ground/slots.ts): at most `size` pieces of work under way, started in arrival order; a
 * slot comes back when work ends or fails, and work stepping `away` lends its slot meanwhile.
 */
import { describe, expect, it } from "vitest";
import { Slots } from "../../src/ground/slots.ts";

/** Work that records its start and ends when the test says. */
function gated() {
  const started: number[] = [];
  const ends = new Map<number, () => void>();
  const fails = new Map<number, (err: Error) => void>();
  const work = (n: number) => () => {
    started.push(n);
    return new Promise<number>((resolve, reject) => {
      ends.set(n, () => resolve(n));
      fails.set(n, reject);
    });
  };
  return { started, work, end: (n: number) => ends.get(n)!(), fail: (n: number) => fails.get(n)!(new Error(`work ${n} failed`)) };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("Slots", () => {
  it("runs at most size at once and starts the rest in arrival order as slots come back", async () => {
    const slots = new Slots(2);
    const g = gated();
    const all = [1, 2, 3, 4, 5].map((n) => slots.run(g.work(n)));
    await settle();
    expect(g.started).toEqual([1, 2]);
    g.end(2);
    await settle();
    expect(g.started).toEqual([1, 2, 3]);
    g.end(1);
    g.end(3);
    await settle();
    expect(g.started).toEqual([1, 2, 3, 4, 5]);
    g.end(4);
    g.end(5);
    await expect(Promise.all(all)).resolves.toEqual([1, 2, 3, 4, 5]);
  });

  it("gives the slot back when the work fails, and passes the failure on", async () => {
    const slots = new Slots(1);
    const g = gated();
    const first = slots.run(g.work(1));
    const second = slots.run(g.work(2));
    await settle();
    g.fail(1);
    await expect(first).rejects.toThrow("work 1 failed");
    await settle();
    expect(g.started).toEqual([1, 2]);
    g.end(2);
    await expect(second).resolves.toBe(2);
  });

  it("lends the slot while work is away, and the work queues for one again after", async () => {
    const slots = new Slots(1);
    let back!: () => void;
    const outside = new Promise<void>((r) => (back = r));
    const order: string[] = [];
    const first = slots.run(async (away) => {
      order.push("first starts");
      await away(() => outside);
      order.push("first is back");
    });
    const second = slots.run(async () => {
      order.push("second runs");
    });
    await settle();
    expect(order).toEqual(["first starts", "second runs"]);
    back();
    await Promise.all([first, second]);
    expect(order).toEqual(["first starts", "second runs", "first is back"]);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => new Slots(0)).toThrow("positive integer");
    expect(() => new Slots(1.5)).toThrow("positive integer");
  });
});
