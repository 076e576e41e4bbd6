/**
 * The cron side of the durable jobs: node-cron fires each schedule's slots, and every fire only
 * enqueues that slot's job (then wakes the worker); the job worker runs it.
 *
 * Invariants kept here (the queue's unique key and the worker's leases make them hold across processes):
 * - A slot runs at most once however many processes share the database: every process enqueues it
 *   under the same key, `<name>:<slot>` (schedules.ts), and the queue keeps the first.
 * - A process that dies while running a slot's job leaves it to the others once its lease runs
 *   out; the job is run again then, never twice to completion (worker.ts).
 * - A slot missed while every process was down runs once at start-up if less than one interval
 *   old (cron-slots.ts says how it is found); older slots are not made up for. A slot a live
 *   process missed (its event loop blocked past node-cron's tolerance) follows the same rule.
 * - Nothing starts by itself: constructing a Scheduler creates no timer (tests and benchmarks
 *   build Cores without background work); `start` creates the node-cron tasks, `stop` destroys them.
 */
import cron, { type ScheduledTask, type TaskContext } from "node-cron";
import { errText, type Logger } from "../ground/log.ts";
import type { Job } from "./job-store.ts";
import type { JobQueue } from "./job-store.ts";
import { catchUpSlot, withinOneInterval, withMatcher, type CronSpec, type Matcher } from "./cron-slots.ts";
import { manualKey, payloadFor, schedulesOf, slotIso, slotKey, type Schedule, type ScheduleName, type ScheduleSettings } from "./schedules.ts";

export interface SchedulerDeps {
  queue: JobQueue;
  /** Wakes the job worker after an enqueue (a slot's job need not wait for the next poll). */
  kick: () => void;
  settings: ScheduleSettings;
  log: Logger;
  now: () => Date;
  /**
   * Whether cairn was in use before `at` (default: yes). A slot is caught up only if it was missed:
   * on a fresh install nothing was, and its first start must not report on an empty week.
   */
  inUseBefore?: (at: Date) => Promise<boolean>;
}

/** Why a slot was enqueued, for the logs. */
type Reason = "fire" | "catch-up" | "missed";

export class Scheduler {
  readonly schedules: readonly Schedule[];
  readonly timezone: string;
  private readonly tasks = new Map<ScheduleName, ScheduledTask>();
  private readonly log: Logger;

  constructor(private readonly deps: SchedulerDeps) {
    this.schedules = schedulesOf(deps.settings);
    this.timezone = deps.settings.timezone;
    this.log = deps.log.child({ component: "scheduler" });
  }

  get running(): boolean {
    return this.tasks.size > 0;
  }

  /** Starts every schedule's node-cron task, then enqueues the slots missed while no process ran. */
  async start(): Promise<void> {
    if (this.running) return;
    for (const schedule of this.schedules) {
      const task = cron.createTask(schedule.cron, (ctx: TaskContext) => this.fired(schedule, ctx.date, "fire"), {
        timezone: this.timezone,
        name: `cairn-${schedule.name}`,
        // Like the worker's poll, a schedule must not keep a process alive that is otherwise done.
        unref: true,
        logger: cronLogger(this.log),
      });
      task.on("execution:missed", (ctx) => this.missed(schedule, ctx.date));
      this.tasks.set(schedule.name, task);
      await task.start();
    }
    this.log.info({ schedules: this.schedules.map((s) => `${s.name}: ${s.cron}`), timezone: this.timezone }, "schedules started");
    await Promise.all(this.schedules.map((s) => this.catchUp(s)));
  }

  /** Destroys the node-cron tasks: no slot fires after this resolves (jobs already queued stay queued). */
  async stop(): Promise<void> {
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    await Promise.all(tasks.map((t) => t.destroy()));
  }

  /** The schedule's next run as node-cron sees it (in the configured zone), started or not. */
  nextRun(name: ScheduleName): Date | null {
    const task = this.tasks.get(name);
    if (task) return task.getNextRun();
    const schedule = this.schedule(name);
    // Not started (a Core without background work): a throwaway task answers.
    const probe = cron.createTask(schedule.cron, () => undefined, { timezone: this.timezone });
    try {
      return probe.getNextRuns(1)[0] ?? null;
    } finally {
      void probe.destroy();
    }
  }

  /** Enqueues a run now (`/cairn jobs run`), keyed by the moment it was asked for, and wakes the worker. */
  async runNow(name: ScheduleName, opts: { dryRun?: boolean; requestedBy?: string } = {}): Promise<Job> {
    const at = this.deps.now();
    const { job } = await this.deps.queue.enqueue(name, payloadFor(name, at.toISOString(), opts), { uniqueKey: manualKey(name, at) });
    this.log.info({ schedule: name, job: job.id, requestedBy: opts.requestedBy, dryRun: opts.dryRun === true }, "manual run queued");
    this.deps.kick();
    return job;
  }

  schedule(name: ScheduleName): Schedule {
    const schedule = this.schedules.find((s) => s.name === name);
    if (!schedule) throw new Error(`no schedule named ${name}`);
    return schedule;
  }

  private spec(schedule: Schedule): CronSpec {
    return { expression: schedule.cron, timezone: this.timezone };
  }

  /** Runs `use` with node-cron's matcher of the schedule: its running task's, or a throwaway one. */
  private withMatch<T>(schedule: Schedule, use: (spec: CronSpec, match: Matcher) => T): T {
    const spec = this.spec(schedule);
    const task = this.tasks.get(schedule.name);
    return task ? use(spec, (at) => task.match(at)) : withMatcher(spec, (match) => use(spec, match));
  }

  /** The latest slot at or before now, if less than one interval old (a no-op when it already ran). */
  private async catchUp(schedule: Schedule): Promise<void> {
    const slot = this.withMatch(schedule, (spec, match) => catchUpSlot(spec, this.deps.now(), match));
    if (slot && (await (this.deps.inUseBefore?.(slot) ?? true))) await this.fired(schedule, slot, "catch-up");
  }

  /** A slot node-cron skipped because this process was late: enqueued if still less than one interval old. */
  private async missed(schedule: Schedule, slot: Date): Promise<void> {
    if (this.withMatch(schedule, (spec, match) => withinOneInterval(spec, slot, this.deps.now(), match))) await this.fired(schedule, slot, "missed");
  }

  /** One slot: its job, under the slot's key, then the worker woken. Never throws (node-cron would only log it). */
  private async fired(schedule: Schedule, at: Date, reason: Reason): Promise<void> {
    const slot = slotIso(at);
    try {
      const { job, created } = await this.deps.queue.enqueue(schedule.kind, payloadFor(schedule.name, slot), { uniqueKey: slotKey(schedule.name, slot) });
      // Every process enqueues every slot: only the one that added it says so at info.
      if (created) this.log.info({ schedule: schedule.name, slot, reason, job: job.id }, "slot queued");
      else this.log.debug({ schedule: schedule.name, slot, reason, job: job.id }, "slot already queued");
      this.deps.kick();
    } catch (err) {
      // The other processes enqueue the same slot; if every one fails, the next start catches it up.
      this.log.error({ schedule: schedule.name, slot, reason, err: errText(err) }, "could not queue a scheduled slot");
    }
  }
}

/** node-cron's own messages (a missed execution, a failed task) in cairn's log. */
function cronLogger(log: Logger) {
  return {
    info: (message: string) => log.info(message),
    warn: (message: string) => log.warn(message),
    error: (message: string | Error, err?: Error) => log.error({ err: errText(err ?? message) }, "node-cron"),
    debug: (message: string | Error) => log.debug(String(message)),
  };
}
