/**
 * cairn's schedules (environment: CAIRN_CURATOR_CRON, CAIRN_REPORT_CRON, CAIRN_VERIFY_CRON,
 * CAIRN_REMIND_CRON, CAIRN_TIMEZONE): what
 * runs when, the payload each slot's job carries, and the unique key that makes a slot one job.
 *
 * A slot's key is `<name>:<slot>`, the slot being the scheduled instant as ISO to the second. Every
 * process computes the same slot for the same fire (node-cron hands over the scheduled instant, not
 * the moment its timer woke up), so however many processes share the database, the queue's unique
 * key leaves one job per slot. A manual run (`/cairn jobs run`) is keyed `<name>:manual:<now>`.
 */

export const SCHEDULE_NAMES = ["curator", "report", "verify", "remind"] as const;
export type ScheduleName = (typeof SCHEDULE_NAMES)[number];

export interface ScheduleSettings {
  /** node-cron expression (five fields, or six with seconds) of the curator's runs. */
  curator: string;
  /** node-cron expression of the weekly report. */
  report: string;
  /** node-cron expression of the review of shared memory due for confirmation (monthly); default DEFAULT_SCHEDULES. */
  verify?: string;
  /** node-cron expression of the reminders of proposals waiting for approval; default DEFAULT_SCHEDULES. */
  remind?: string;
  /** IANA zone the expressions are read in. */
  timezone: string;
}

export const DEFAULT_SCHEDULES: Required<ScheduleSettings> = {
  // Sunday 03:00: the quietest hour of the week for a team.
  curator: "0 3 * * 0",
  // Monday 09:00: the week's report when the team starts the week.
  report: "0 9 * * 1",
  // The 1st of the month, 09:00: what shared memory nobody has confirmed for CAIRN_VERIFY_DAYS.
  verify: "0 9 1 * *",
  // Hourly, at a quarter past: proposals waiting longer than CAIRN_APPROVAL_REMIND_HOURS.
  remind: "15 * * * *",
  timezone: "UTC",
};

export interface Schedule {
  name: ScheduleName;
  cron: string;
  /** The job kind each slot enqueues (its handler lives in src/curator or src/report). */
  kind: string;
}

export function schedulesOf(settings: ScheduleSettings): Schedule[] {
  return SCHEDULE_NAMES.map((name) => ({ name, cron: settings[name] ?? DEFAULT_SCHEDULES[name], kind: name }));
}

export function isScheduleName(word: string): word is ScheduleName {
  return (SCHEDULE_NAMES as readonly string[]).includes(word);
}

/** The payloads of the kinds (their handlers validate them with their own schemas): the curator's has a dry run, the others a slot. */
export type CuratorPayload = { slot: string; dryRun: boolean; requestedBy?: string };
export type ReportPayload = { slot: string; requestedBy?: string };

export function payloadFor(name: ScheduleName, slot: string, opts: { dryRun?: boolean; requestedBy?: string } = {}): CuratorPayload | ReportPayload {
  const requestedBy = opts.requestedBy ? { requestedBy: opts.requestedBy } : {};
  return name === "curator" ? { slot, dryRun: opts.dryRun === true, ...requestedBy } : { slot, ...requestedBy };
}

/** A slot as its key and payload show it: the scheduled instant, to the second. */
export function slotIso(at: Date): string {
  return new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString();
}

export const slotKey = (name: ScheduleName, slot: string): string => `${name}:${slot}`;
export const manualKey = (name: ScheduleName, at: Date): string => `${name}:manual:${at.toISOString()}`;

/**
 * The IANA zone `zone` names, in its canonical spelling ("europe/paris" -> "Europe/Paris"), or null
 * when this runtime does not know it. Offsets ("+01:00") are refused: they are not zones, and a
 * schedule written in one would not follow the place's summer time.
 */
export function timeZoneOf(zone: string): string | null {
  if (!/^[A-Za-z]/.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
