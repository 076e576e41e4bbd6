/**
 * Slots of a cron schedule before a given instant. node-cron 4 computes only the runs after now,
 * but start-up needs the slot missed while every process was down, so this walks backwards.
 *
 * How, and why it agrees with node-cron: node-cron finds its next run by walking local calendar
 * days (in the schedule's zone) forwards, and within a day the expression's hours, minutes and
 * seconds in ascending order; a local time becomes an instant by the zone's offset (a guess,
 * corrected once, see `localToInstant`), and counts when node-cron's matcher accepts that instant.
 * `previousFire` walks the same candidates in reverse: days newest first, times descending, and
 * takes the first one before the bound that the matcher accepts. The field lists come from
 * `cron.parse`, the offsets from the same Intl data, and the matcher is node-cron's own
 * (`task.match`, which also knows L, W and # days), so six-field expressions, zones and summer-time
 * days fire at the same instants here as in node-cron. Why the first accepted candidate is the
 * latest instant: local time maps to instants in order, except that a time skipped by a spring
 * change maps an hour later, onto a time the day really has, which the walk met first. One step is
 * needed near a change: a local time after the bound's can be an earlier instant (an autumn day's
 * repeated hour), so the first day's walk then starts two hours later.
 */
import cron from "node-cron";

export interface CronSpec {
  expression: string;
  timezone: string;
}

/** Does node-cron fire at this instant? (node-cron's own matcher: `ScheduledTask.match`.) */
export type Matcher = (at: Date) => boolean;

/** Far enough back for any valid expression: February 29th on a given weekday recurs within 28 years. */
const MAX_DAYS = 29 * 366;
const HOUR_MS = 3_600_000;

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function localTime(ms: number, timezone: string): LocalTime {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(timezone, format);
  }
  const parts: Record<string, number> = {};
  for (const p of format.formatToParts(new Date(ms))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

const utcOf = (t: LocalTime): number => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

/** The zone's offset from UTC at this instant, in ms. */
const offsetAt = (ms: number, timezone: string): number => utcOf(localTime(ms, timezone)) - Math.floor(ms / 1000) * 1000;

const readsBack = (ms: number, t: LocalTime, timezone: string): boolean => utcOf(localTime(ms, timezone)) === utcOf(t);

/**
 * A local time as an instant, by node-cron's rule (its `localTimeToTimestamp`): the offset at the
 * time read as UTC, corrected once when the offset differs there; in a repeated hour the first
 * reading wins, and a skipped time becomes the later candidate (an hour on).
 */
export function localToInstant(t: LocalTime, timezone: string): number {
  const guess = utcOf(t);
  const first = offsetAt(guess, timezone);
  const one = guess - first;
  const second = offsetAt(one, timezone);
  if (second === first) return one;
  const two = guess - second;
  if (readsBack(one, t, timezone)) return one;
  if (readsBack(two, t, timezone)) return two;
  return Math.max(one, two);
}

const descending = (values: readonly number[]) => [...values].sort((a, b) => b - a);
const secondOfDay = (t: Pick<LocalTime, "hour" | "minute" | "second">) => t.hour * 3600 + t.minute * 60 + t.second;

function previousDay(t: LocalTime): LocalTime {
  const d = new Date(Date.UTC(t.year, t.month - 1, t.day - 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 23, minute: 59, second: 59 };
}

/** A matcher for `spec` from a stopped node-cron task, used once and destroyed (the registry keeps every task). */
export function withMatcher<T>(spec: CronSpec, use: (match: Matcher) => T): T {
  const task = cron.createTask(spec.expression, () => undefined, { timezone: spec.timezone });
  try {
    return use((at) => task.match(at));
  } finally {
    void task.destroy();
  }
}

/** The latest instant strictly before `before` at which node-cron fires `spec`; null if none within 29 years. */
export function previousFire(spec: CronSpec, before: Date, match: Matcher): Date | null {
  const fields = cron.parse(spec.expression);
  const months = new Set(fields.month);
  const hours = descending(fields.hour);
  const minutes = descending(fields.minute);
  const seconds = descending(fields.second);
  const beforeMs = before.getTime();
  const tz = spec.timezone;
  // Near an offset change a later local time can be an earlier instant: start the walk later then.
  const changing = offsetAt(beforeMs, tz) !== offsetAt(beforeMs - 3 * HOUR_MS, tz) || offsetAt(beforeMs, tz) !== offsetAt(beforeMs + 3 * HOUR_MS, tz);
  let day = localTime(changing ? beforeMs + 2 * HOUR_MS : beforeMs, tz);
  let bound: number | null = secondOfDay(day);
  for (let i = 0; i < MAX_DAYS; i++, day = previousDay(day), bound = null) {
    if (!months.has(day.month)) continue;
    const found = latestOnDay(day, bound, { hours, minutes, seconds }, beforeMs, tz, match);
    if (found !== null) return new Date(found);
  }
  return null;
}

function latestOnDay(
  day: LocalTime,
  bound: number | null,
  times: { hours: number[]; minutes: number[]; seconds: number[] },
  beforeMs: number,
  tz: string,
  match: Matcher,
): number | null {
  for (const hour of times.hours) {
    if (bound !== null && hour * 3600 > bound) continue;
    for (const minute of times.minutes) {
      for (const second of times.seconds) {
        const t = { ...day, hour, minute, second };
        if (bound !== null && secondOfDay(t) > bound) continue;
        const at = localToInstant(t, tz);
        if (at >= beforeMs) continue;
        if (match(new Date(at))) return at;
        // The time fields match by construction: a time the day really has that the matcher
        // refuses means the day itself (day of month, weekday) is not one of the schedule's.
        if (readsBack(at, t, tz)) return null;
      }
    }
  }
  return null;
}

/**
 * Whether a slot is still worth running late: less than one interval old, the interval being the
 * gap between it and the slot before it (the schedule's period at that point). A weekly slot stays
 * due for a week; a weekday slot missed on Friday is not run on Monday morning, an hour before
 * Monday's own.
 */
export function withinOneInterval(spec: CronSpec, slot: Date, now: Date, match: Matcher): boolean {
  const earlier = previousFire(spec, slot, match);
  return earlier === null || now.getTime() - slot.getTime() < slot.getTime() - earlier.getTime();
}

/** The slot to run at start-up: the latest at or before `now` (to the second), if less than one interval old. */
export function catchUpSlot(spec: CronSpec, now: Date, match: Matcher): Date | null {
  const last = previousFire(spec, new Date(Math.floor(now.getTime() / 1000) * 1000 + 1000), match);
  return last && withinOneInterval(spec, last, now, match) ? last : null;
}
