/**
 * `/cairn jobs`: each schedule with its last run (status, when, how long, what it did) and its next
 * one, in the configured zone. `/cairn jobs run <curator|report> [--dry-run]` queues a run now:
 * admins only, since the curator changes the team's skills and the report posts to a channel.
 */
import type { Inbound } from "../ground/types.ts";
import type { CommandReply } from "../ground/commands.ts";
import type { Logger } from "../ground/log.ts";
import type { Job, JobQueue } from "../jobs/job-store.ts";
import type { Scheduler } from "../jobs/scheduler.ts";
import { isAdmin, qualified, type AccessPolicy } from "../admission/access.ts";
import { isScheduleName, SCHEDULE_NAMES, type Schedule } from "../jobs/schedules.ts";

export const JOBS_USAGE = "Usage: `jobs` lists the schedules; admins: `jobs run curator [--dry-run]` or `jobs run report` runs one now.";
const DRY_RUN_FLAGS = new Set(["--dry-run", "dry-run", "--dryrun"]);

/** What `jobs` needs: the schedules and their runs, and for `jobs run` who is an admin. */
export interface JobsDeps {
  scheduler: Pick<Scheduler, "schedules" | "timezone" | "nextRun" | "runNow">;
  jobs: Pick<JobQueue, "lastStarted" | "countQueued">;
  settings: { access: AccessPolicy };
  log: Logger;
}

export async function jobsCommand(deps: JobsDeps, inbound: Inbound, args: readonly string[]): Promise<CommandReply> {
  const [verb, ...rest] = args.map((a) => a.toLowerCase());
  if (verb === undefined) return { text: await listSchedules(deps), ephemeral: true };
  if (verb !== "run") return { text: JOBS_USAGE, ephemeral: true };
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    deps.log.info({ user: inbound.author.externalId, command: "jobs run" }, "admin command refused");
    return { text: "Only cairn admins can run scheduled jobs by hand. `jobs` shows when they run next.", ephemeral: true };
  }
  const [name, ...flags] = rest;
  if (!name || !isScheduleName(name)) return { text: `Which job? ${SCHEDULE_NAMES.map((n) => `\`jobs run ${n}\``).join(" or ")}.`, ephemeral: true };
  const dryRun = flags.some((f) => DRY_RUN_FLAGS.has(f));
  if (flags.some((f) => !DRY_RUN_FLAGS.has(f)) || (dryRun && name !== "curator")) return { text: JOBS_USAGE, ephemeral: true };
  const job = await deps.scheduler.runNow(name, { dryRun, requestedBy: qualified(inbound.platform, inbound.author.externalId) });
  return { text: `Queued a ${dryRun ? "dry run of the curator" : `${name} run`} now (job ${job.id}). \`jobs\` shows its result once it is done.`, ephemeral: true };
}

async function listSchedules(deps: Pick<JobsDeps, "scheduler" | "jobs">): Promise<string> {
  const zone = deps.scheduler.timezone;
  const lines = await Promise.all(deps.scheduler.schedules.map((s) => scheduleLine(deps, s, zone)));
  return [`**Scheduled jobs** (times in ${zone})`, ...lines].join("\n");
}

async function scheduleLine(deps: Pick<JobsDeps, "scheduler" | "jobs">, schedule: Schedule, zone: string): Promise<string> {
  const [last, queued] = await Promise.all([deps.jobs.lastStarted(schedule.kind), deps.jobs.countQueued(schedule.kind)]);
  const next = deps.scheduler.nextRun(schedule.name);
  const waiting = queued > 0 ? ` · ${queued} waiting to run` : "";
  return `- **${schedule.name}** \`${schedule.cron}\`: next ${next ? formatWhen(next, zone) : "never"} · last: ${last ? describeRun(last, zone) : "never run"}${waiting}`;
}

function describeRun(job: Job, zone: string): string {
  const byHand = job.uniqueKey?.includes(":manual:") ? " (run by hand)" : "";
  const started = `${job.startedAt ? formatWhen(job.startedAt, zone) : "?"}${byHand}`;
  const took = job.startedAt && job.finishedAt ? `, took ${formatDuration(job.finishedAt.getTime() - job.startedAt.getTime())}` : "";
  switch (job.status) {
    case "done":
      return `done ${started}${took}${job.result ? `: ${oneLine(job.result)}` : ""}`;
    case "failed":
      return `failed ${started}${took}${job.lastError ? `: ${oneLine(job.lastError)}` : ""}`;
    case "running":
      return `running since ${started}`;
    default:
      // Started once and queued again: a failed attempt waiting for its retry.
      return `attempt ${job.attempts} failed ${started}, retrying${job.lastError ? `: ${oneLine(job.lastError)}` : ""}`;
  }
}

const oneLine = (text: string, max = 200): string => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** "Sun 2026-12-06 03:00" in the zone (seconds shown when a six-field schedule has them). */
export function formatWhen(at: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", weekday: "short", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${parts.second === "00" ? "" : `:${parts.second}`}`;
}

export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
