/**
 * The in-process job worker: claims due jobs of the kinds it has handlers for and runs them, beside
 * the turns, never in front of them.
 *
 * Invariants kept here (the queue's conditional updates make them hold across processes):
 * - A job is claimed with a short lease that is renewed while its handler runs; a worker that dies
 *   leaves its jobs to whichever worker claims them once the lease runs out.
 * - A job is recorded done at most once: only the claim that holds a job may mark it done. A
 *   handler whose lease was taken over (its worker stalled longer than a lease) is told through its
 *   signal and its result is not recorded; since the new holder runs it again, handlers write
 *   through idempotent keys (a unique key, a conditional update), so a second run changes nothing.
 * - A failure is retried with backoff and ends as `failed` with the error kept after the job's
 *   attempts; a payload its handler's schema refuses fails at once (retrying cannot fix it).
 */
import type { z } from "zod";
import { errText, type Logger } from "../ground/log.ts";
import type { Claim, JobQueue } from "./job-store.ts";
import type { Metrics } from "../ops/metrics.ts";

/** What a kind of job does with its (validated) payload. */
export interface JobHandler<P = unknown> {
  kind: string;
  payload: z.ZodType<P>;
  /**
   * `signal` aborts when the worker lost the job's lease or is stopping: stop early, write nothing
   * more. A string returned is the job's result: a short summary kept with the job (`/cairn jobs`).
   */
  run(payload: P, signal: AbortSignal): Promise<void | string>;
}

/** A handler with its payload's type checked against its schema. */
export function defineJob<P>(handler: JobHandler<P>): JobHandler<unknown> {
  return handler as JobHandler<unknown>;
}

export interface WorkerOptions {
  /** How often an idle worker looks for due jobs. */
  pollMs?: number;
  /** A claim's lease; renewed every third of it while the handler runs. */
  leaseMs?: number;
  /** Jobs run at once by this worker. */
  concurrency?: number;
  /** First retry delay; doubled on each further attempt. */
  backoffMs?: number;
}

/** Why a job's payload could not be used: a permanent failure. */
class PayloadError extends Error {}

export class JobWorker {
  private readonly handlers = new Map<string, JobHandler<unknown>>();
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private readonly opts: Required<WorkerOptions>;

  constructor(
    private readonly queue: JobQueue,
    handlers: readonly JobHandler<unknown>[],
    private readonly log: Logger,
    opts: WorkerOptions = {},
    private readonly metrics?: Metrics,
  ) {
    for (const h of handlers) this.handlers.set(h.kind, h);
    this.opts = { pollMs: 1_000, leaseMs: 30_000, concurrency: 2, backoffMs: 30_000, ...opts };
  }

  /** Starts polling; call `kick` after an enqueue to run a due job without waiting for the poll. */
  start(): void {
    if (this.timer || this.stopping.signal.aborted) return;
    this.timer = setInterval(() => this.kick(), this.opts.pollMs);
    // Polling must not keep a process alive that is otherwise done.
    this.timer.unref();
    this.kick();
  }

  /** Looks for due jobs now (coalesced with a look already under way); only once started. */
  kick(): void {
    if (!this.timer || this.stopping.signal.aborted || this.handlers.size === 0) return;
    this.polling ??= this.fill().finally(() => (this.polling = null));
  }

  /** Stops claiming; jobs under way finish (up to `graceMs`), the rest are handed back through their leases. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([this.polling, ...this.running]), new Promise((r) => (grace = setTimeout(r, graceMs)))]);
    clearTimeout(grace);
    this.stopping.abort();
  }

  /** Runs due jobs one after another until none is due (a worker that is not polling: scripts, tests). */
  async drain(): Promise<void> {
    while (!this.stopping.signal.aborted && (await this.claimOne())) await Promise.allSettled([...this.running]);
    await Promise.allSettled([...this.running]);
  }

  private async fill(): Promise<void> {
    try {
      while (this.running.size < this.opts.concurrency && !this.stopping.signal.aborted && (await this.claimOne()));
    } catch (err) {
      this.log.warn({ err: errText(err) }, "could not claim jobs; trying again at the next poll");
    }
  }

  /** Claims one due job and starts it; false when none is due. */
  private async claimOne(): Promise<boolean> {
    const job = await this.queue.claim([...this.handlers.keys()], this.opts.leaseMs);
    if (!job) return false;
    const handler = this.handlers.get(job.kind);
    if (!handler) return false;
    const task: Promise<void> = this.execute(handler, job, job.payload).finally(() => {
      this.running.delete(task);
      // A slot is free: there may be more due.
      this.kick();
    });
    this.running.add(task);
    return true;
  }

  private async execute(handler: JobHandler<unknown>, claim: Claim, raw: string): Promise<void> {
    const log = this.log.child({ job: claim.id, kind: handler.kind, attempt: claim.attempts });
    const lost = new AbortController();
    const signal = AbortSignal.any([lost.signal, this.stopping.signal]);
    const renewal = setInterval(() => {
      this.queue.renew(claim, this.opts.leaseMs).then(
        (held) => {
          if (!held) lost.abort();
        },
        (err: unknown) => log.warn({ err: errText(err) }, "could not renew the job's lease"),
      );
    }, Math.max(10, Math.floor(this.opts.leaseMs / 3)));
    const started = Date.now();
    try {
      const payload = parsePayload(handler, raw);
      const result = await handler.run(payload, signal);
      if (lost.signal.aborted || !(await this.queue.complete(claim, typeof result === "string" ? result : null))) {
        this.metrics?.job(handler.kind, "lost");
        log.warn("the job's lease was taken over while it ran; its result is not recorded");
        return;
      }
      this.metrics?.job(handler.kind, "done");
      log.info({ ms: Date.now() - started }, "job done");
    } catch (err) {
      const final = err instanceof PayloadError || claim.attempts >= claim.maxAttempts;
      const recorded = await this.queue.fail(claim, errText(err), { backoffMs: this.opts.backoffMs, final }).catch(() => false);
      this.metrics?.job(handler.kind, final ? "failed" : "retry");
      log.warn({ err: errText(err), final, recorded }, "job failed");
    } finally {
      clearInterval(renewal);
    }
  }
}

function parsePayload(handler: JobHandler<unknown>, raw: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new PayloadError(`the ${handler.kind} job's payload is not JSON`);
  }
  const parsed = handler.payload.safeParse(json);
  if (!parsed.success) throw new PayloadError(`the ${handler.kind} job's payload does not fit its schema: ${parsed.error.message}`);
  return parsed.data;
}
