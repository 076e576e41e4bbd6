import { expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { JobQueue } from "../../src/jobs/job-store.ts";

forEachDatabase("durable job queue", (getDb) => {
  it("enqueues idempotently by unique key", async () => {
    const q = new JobQueue(getDb().prisma);
    const key = uniqueId("slot");
    const a = await q.enqueue("curator", { n: 1 }, { uniqueKey: key });
    const b = await q.enqueue("curator", { n: 2 }, { uniqueKey: key });
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.job.id).toBe(a.job.id);
    expect(JSON.parse(b.job.payload)).toEqual({ n: 1 });
  });

  it("lets exactly one of several racing workers claim a job", async () => {
    const kind = uniqueId("kind");
    const db = getDb().prisma;
    await new JobQueue(db).enqueue(kind, {});
    const workers = Array.from({ length: 5 }, () => new JobQueue(db));
    const claims = await Promise.all(workers.map((w) => w.claim([kind])));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    expect(claims.find((c) => c)?.status).toBe("running");
  });

  it("re-offers a job whose worker died once its lease expires, and retries failures with backoff", async () => {
    const kind = uniqueId("kind");
    let now = new Date("2026-01-01T00:00:00Z");
    const clock = () => now;
    const db = getDb().prisma;
    const q = new JobQueue(db, clock);
    await q.enqueue(kind, { step: 1 }, { maxAttempts: 2 });
    const first = await q.claim([kind], 60_000);
    expect(first?.attempts).toBe(1);
    expect(await q.claim([kind], 60_000)).toBeNull();
    now = new Date(now.getTime() + 61_000);
    const again = await new JobQueue(db, clock).claim([kind], 60_000);
    expect(again?.id).toBe(first?.id);
    expect(again?.attempts).toBe(2);
    await q.fail(again!, "review model down");
    const failed = (await q.list(kind))[0]!;
    expect(failed.status).toBe("failed");
    expect(failed.lastError).toBe("review model down");

    await q.enqueue(kind, { step: 2 });
    const job = await q.claim([kind]);
    await q.fail(job!, "transient", { backoffMs: 1_000 });
    expect(await q.claim([kind])).toBeNull();
    now = new Date(now.getTime() + 1_001);
    const retried = await q.claim([kind]);
    expect(retried?.id).toBe(job?.id);
    await q.complete(retried!);
    expect((await q.list(kind, "done")).map((j) => j.id)).toEqual([job!.id]);
  });
});
