/**
 * The durable job table: background work (reviews of turns, reaction feedback, curator runs,
 * reports) that must survive a crash. A job is claimed with a lease; a worker that dies leaves it
 * to be claimed again once the lease runs out. `uniqueKey` makes an enqueue idempotent (a platform
 * retry, or one cron slot seen by several replicas, adds one job).
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client.ts";
import type { Job } from "../db/generated/sqlite/client.ts";
import { isUniqueViolation } from "../db/errors.ts";

export type { Job } from "../db/generated/sqlite/client.ts";

/** A claimed job: its id, the worker holding it and the attempt it is on identify the claim. */
export type Claim = Pick<Job, "id" | "lockedBy" | "attempts" | "maxAttempts">;

/** Only the claim that holds a job may change it: a worker whose lease was taken over cannot. */
function held(claim: Claim) {
  return { id: claim.id, status: "running", lockedBy: claim.lockedBy, attempts: claim.attempts };
}

/** A handler's summary of a done job is kept this short: `/cairn jobs` shows it on one line. */
export const MAX_RESULT_CHARS = 500;

export interface EnqueueOptions {
  uniqueKey?: string;
  runAt?: Date;
  maxAttempts?: number;
}

export class JobQueue {
  readonly workerId = `worker-${randomUUID()}`;

  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Adds a job; with a uniqueKey already used, returns the existing job instead (idempotent). */
  async enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<{ job: Job; created: boolean }> {
    try {
      const job = await this.db.job.create({
        data: {
          kind,
          payload: JSON.stringify(payload),
          runAt: opts.runAt ?? this.now(),
          maxAttempts: opts.maxAttempts ?? 5,
          uniqueKey: opts.uniqueKey ?? null,
        },
      });
      return { job, created: true };
    } catch (err) {
      if (!opts.uniqueKey || !isUniqueViolation(err)) throw err;
      return { job: await this.db.job.findUniqueOrThrow({ where: { uniqueKey: opts.uniqueKey } }), created: false };
    }
  }

  /**
   * Claims the oldest due job of these kinds: queued, or running with an expired lease. The claim is
   * a conditional update, so two workers racing for one job cannot both win.
   */
  async claim(kinds: readonly string[], leaseMs = 5 * 60_000): Promise<Job | null> {
    const now = this.now();
    for (let tries = 0; tries < 5; tries++) {
      const candidate = await this.db.job.findFirst({
        where: {
          kind: { in: [...kinds] },
          runAt: { lte: now },
          OR: [{ status: "queued" }, { status: "running", lockedUntil: { lt: now } }],
        },
        orderBy: [{ runAt: "asc" }, { createdAt: "asc" }],
      });
      if (!candidate) return null;
      const won = await this.db.job.updateMany({
        where: { id: candidate.id, status: candidate.status, attempts: candidate.attempts },
        // Each attempt's start is recorded (for `/cairn jobs`); an earlier attempt's end no longer applies.
        data: { status: "running", lockedBy: this.workerId, lockedUntil: new Date(now.getTime() + leaseMs), attempts: { increment: 1 }, startedAt: now, finishedAt: null, result: null },
      });
      if (won.count === 1) return this.db.job.findUniqueOrThrow({ where: { id: candidate.id } });
    }
    return null;
  }

  /**
   * Extends a claim's lease while its work runs, so leases can be short and a dead worker's jobs
   * are taken over soon. False: the claim was lost (the lease ran out and another worker took it).
   */
  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const won = await this.db.job.updateMany({
      where: held(claim),
      data: { lockedUntil: new Date(this.now().getTime() + leaseMs) },
    });
    return won.count === 1;
  }

  /**
   * Marks the job done with the short summary its handler returned, if this claim still holds it;
   * false when another worker has it now.
   */
  async complete(claim: Claim, result: string | null = null): Promise<boolean> {
    const won = await this.db.job.updateMany({
      where: held(claim),
      data: { status: "done", lockedBy: null, lockedUntil: null, lastError: null, finishedAt: this.now(), result: result === null ? null : result.slice(0, MAX_RESULT_CHARS) },
    });
    return won.count === 1;
  }

  /**
   * Records a failure, if this claim still holds the job: retried later with backoff, or marked
   * failed after maxAttempts (or at once when `final`), the error kept.
   */
  async fail(claim: Claim, error: string, opts: { backoffMs?: number; final?: boolean } = {}): Promise<boolean> {
    const final = opts.final === true || claim.attempts >= claim.maxAttempts;
    const backoffMs = opts.backoffMs ?? 30_000;
    const won = await this.db.job.updateMany({
      where: held(claim),
      data: {
        status: final ? "failed" : "queued",
        lastError: error.slice(0, 2000),
        lockedBy: null,
        lockedUntil: null,
        ...(final ? { finishedAt: this.now() } : { runAt: new Date(this.now().getTime() + backoffMs * 2 ** (claim.attempts - 1)) }),
      },
    });
    return won.count === 1;
  }

  async list(kind: string, status?: string): Promise<Job[]> {
    // Jobs queued in the same millisecond tie on createdAt: the id (a cuid: time, then a counter) keeps their order.
    return this.db.job.findMany({ where: { kind, ...(status ? { status } : {}) }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /** The job of this kind that started last (running, done or failed), or null when none has started. */
  async lastStarted(kind: string): Promise<Job | null> {
    return this.db.job.findFirst({ where: { kind, startedAt: { not: null } }, orderBy: [{ startedAt: "desc" }, { createdAt: "desc" }] });
  }

  /** Jobs queued (due or not) or running, by kind and status: the queue's depth, for the metrics. */
  async depth(): Promise<{ kind: string; status: string; count: number }[]> {
    const groups = await this.db.job.groupBy({ by: ["kind", "status"], where: { status: { in: ["queued", "running"] } }, _count: { _all: true } });
    return groups.map((g) => ({ kind: g.kind, status: g.status, count: g._count._all }));
  }

  /** Jobs of this kind waiting for a worker. */
  async countQueued(kind: string): Promise<number> {
    return this.db.job.count({ where: { kind, status: "queued" } });
  }
}
