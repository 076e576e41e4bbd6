/**
 * A read shared by callers that ask at once (src/ground/cache/shared-read.ts), never older than
 * any caller's call: one who asks while a read is under way gets the next read, which starts after
 * the one under way ends and so sees every write made before the call.
 */
import { describe, expect, it } from "vitest";
import { SharedRead } from "../../src/ground/cache/shared-read.ts";

/** A store whose reads finish when the test says, counting them. */
function slowStore() {
  let value = "v1";
  let reads = 0;
  const pending: (() => void)[] = [];
  const load = (): Promise<string> => {
    reads++;
    const seen = value;
    return new Promise((resolve) => pending.push(() => resolve(seen)));
  };
  const finish = async (): Promise<void> => {
    while (pending.length) pending.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { load, finish, reads: () => reads, write: (v: string) => void (value = v) };
}

describe("SharedRead", () => {
  it("gives callers who arrive during a read the next read, shared: two reads for a burst", async () => {
    const store = slowStore();
    const shared = new SharedRead<string, string>();
    const first = shared.read("ws", store.load);
    const burst = Array.from({ length: 50 }, () => shared.read("ws", store.load));
    expect(store.reads()).toBe(1);
    await store.finish();
    expect(store.reads()).toBe(2);
    await store.finish();
    await expect(first).resolves.toBe("v1");
    expect(new Set(await Promise.all(burst))).toEqual(new Set(["v1"]));
    expect(shared.inFlight).toBe(0);
  });

  it("never hands a caller a read that began before a write made before its call", async () => {
    const store = slowStore();
    const shared = new SharedRead<string, string>();
    const before = shared.read("ws", store.load);
    store.write("v2");
    const after = shared.read("ws", store.load);
    await store.finish();
    await store.finish();
    await expect(before).resolves.toBe("v1");
    await expect(after).resolves.toBe("v2");
  });

  it("keeps keys apart and keeps nothing once the reads are done", async () => {
    const store = slowStore();
    const shared = new SharedRead<string, string>();
    const a = shared.read("a", store.load);
    const b = shared.read("b", store.load);
    expect(store.reads()).toBe(2);
    await store.finish();
    await Promise.all([a, b]);
    shared.read("a", store.load);
    expect(store.reads()).toBe(3);
    await store.finish();
  });

  it("does not share a failure with callers who asked after it began", async () => {
    const shared = new SharedRead<string, string>();
    let n = 0;
    let fail!: (e: Error) => void;
    const first = shared.read("k", () => new Promise<string>((_, reject) => (fail = reject)));
    const next = shared.read("k", async () => `read ${++n}`);
    fail(new Error("connection reset"));
    await expect(first).rejects.toThrow("connection reset");
    await expect(next).resolves.toBe("read 1");
  });
});
