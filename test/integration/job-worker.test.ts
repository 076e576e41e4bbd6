/** The job worker on both databases: real claims, leases and retries, several workers at once. */
import { expect, it } from "vitest";
import { z } from "zod";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { JobQueue } from "../../src/jobs/job-store.ts";
import { defineJob, JobWorker, type JobHandler, type WorkerOptions } from "../../src/jobs/worker.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { waitUntil } from "../fakes/http.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachDatabase("job worker", (getDb) => {
  const queue = () => new JobQueue(getDb().prisma);
  /** A kind whose handler counts its finished runs per payload id (optionally slow or failing). */
  function counting(kind: string, behave: { ms?: number; failTimes?: number } = {}) {
    const done = new Map<number, number>();
    const tries = new Map<number, number>();
    const handler = defineJob({
      kind,
      payload: z.object({ n: z.number().int() }),
      async run({ n }) {
        tries.set(n, (tries.get(n) ?? 0) + 1);
        if ((tries.get(n) ?? 0) <= (behave.failTimes ?? 0)) throw new Error(`attempt ${tries.get(n)} of ${n} failed`);
        if (behave.ms) await sleep(behave.ms);
        done.set(n, (done.get(n) ?? 0) + 1);
      },
    });
    return { handler, done, tries };
  }
  const worker = (handlers: JobHandler[], opts: WorkerOptions = {}) =>
    new JobWorker(queue(), handlers, silentLogger, { pollMs: 25, leaseMs: 300, backoffMs: 20, ...opts });

  it("runs each due job of its kinds once, across two workers, and leaves other kinds alone", async () => {
    const kind = uniqueId("count");
    const other = uniqueId("other");
    const q = queue();
    for (let n = 0; n < 20; n++) await q.enqueue(kind, { n });
    await q.enqueue(other, { n: 99 });
    const c = counting(kind, { ms: 5 });
    // Leases long enough that a loaded machine's stalls never expire one here: this case is about
    // two workers sharing the work, the next ones about leases.
    const workers = [worker([c.handler], { leaseMs: 10_000 }), worker([c.handler], { leaseMs: 10_000 })];
    for (const w of workers) w.start();
    try {
      await waitUntil("20 jobs done", async () => (await q.list(kind, "done")).length === 20, 20_000);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    expect([...c.done.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect([...c.done.values()].every((count) => count === 1)).toBe(true);
    expect((await q.list(other)).map((j) => j.status)).toEqual(["queued"]);
    // Each done job has its start and end; a handler that returns nothing leaves no result.
    expect((await q.list(kind, "done")).filter((j) => !j.startedAt || !j.finishedAt || j.result !== null)).toEqual([]);
  });

  it("retries a failure with backoff, ends a job that keeps failing as failed with its error, and fails a bad payload at once", async () => {
    const kind = uniqueId("flaky");
    const q = queue();
    const flaky = counting(kind, { failTimes: 2 });
    await q.enqueue(kind, { n: 1 }, { maxAttempts: 3 });
    const w = worker([flaky.handler]);
    await w.drain();
    // The first failure is due again after the backoff: drain stops while nothing is due.
    await waitUntil("recovered after two failures", async () => {
      await w.drain();
      return (await q.list(kind, "done")).length === 1;
    }, 10_000);
    expect(flaky.tries.get(1)).toBe(3);
    expect(flaky.done.get(1)).toBe(1);

    const hopeless = uniqueId("hopeless");
    const always = counting(hopeless, { failTimes: 99 });
    await q.enqueue(hopeless, { n: 2 }, { maxAttempts: 2 });
    await q.enqueue(hopeless, { n: "not a number" });
    const w2 = worker([always.handler]);
    await waitUntil("both ended", async () => {
      await w2.drain();
      return (await q.list(hopeless, "failed")).length === 2;
    }, 10_000);
    const [retried, malformed] = await q.list(hopeless);
    expect(retried).toMatchObject({ status: "failed", attempts: 2, lastError: "attempt 2 of 2 failed", result: null });
    // The last attempt's start and the final failure are recorded (`/cairn jobs` shows them).
    expect(retried!.finishedAt!.getTime()).toBeGreaterThanOrEqual(retried!.startedAt!.getTime());
    expect(malformed).toMatchObject({ status: "failed", attempts: 1 });
    expect(malformed!.lastError).toMatch(/payload does not fit its schema/);
    expect(always.tries.get(2)).toBe(2);
  });

  it("runs a job whose worker died after its lease, once, and refuses the dead worker's late completion", async () => {
    const kind = uniqueId("orphan");
    const q = queue();
    await q.enqueue(kind, { n: 7 });
    // A worker claims it and dies: no renewal, no completion.
    const dead = await queue().claim([kind], 200);
    expect(dead).not.toBeNull();
    const c = counting(kind);
    const w = worker([c.handler]);
    w.start();
    try {
      await waitUntil("taken over", async () => (await q.list(kind, "done")).length === 1, 10_000);
    } finally {
      await w.stop();
    }
    expect(c.done.get(7)).toBe(1);
    expect(await q.complete(dead!)).toBe(false);
    expect(await q.fail(dead!, "late")).toBe(false);
    expect((await q.list(kind))[0]).toMatchObject({ status: "done", attempts: 2, lastError: null });
  });

  it("renews the lease of a long job, so a second worker never takes it over", async () => {
    const kind = uniqueId("long");
    const q = queue();
    await q.enqueue(kind, { n: 1 });
    // Three leases long: without renewal the second worker would take it over.
    const c = counting(kind, { ms: 3_000 });
    const workers = [worker([c.handler], { leaseMs: 1_000 }), worker([c.handler], { leaseMs: 1_000 })];
    for (const w of workers) w.start();
    try {
      await waitUntil("done", async () => (await q.list(kind, "done")).length === 1, 10_000);
      await sleep(300);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    expect(c.tries.get(1)).toBe(1);
    expect((await q.list(kind))[0]!.attempts).toBe(1);
  });

  it("lets a job under way finish on stop, then claims nothing more", async () => {
    const kind = uniqueId("stop");
    const q = queue();
    await q.enqueue(kind, { n: 1 });
    const c = counting(kind, { ms: 200 });
    const w = worker([c.handler]);
    w.start();
    await waitUntil("running", () => c.tries.get(1) === 1, 10_000);
    await w.stop();
    expect(c.done.get(1)).toBe(1);
    await q.enqueue(kind, { n: 2 });
    w.kick();
    await sleep(150);
    expect(c.tries.has(2)).toBe(false);
    expect((await q.list(kind, "queued")).length).toBe(1);
  });
});
