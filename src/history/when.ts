/**
 * Dates as a model writes them ("2026-11-03", "yesterday", "last week", "3 days ago"), read as a
 * span of time in a time zone: session_search's `after` and `before`. Pure: the caller hands in
 * now and the zone (CAIRN_TIMEZONE), so a test pins both.
 */

/** [start, end) in UTC instants. */
export interface Span {
  start: Date;
  end: Date;
}

export type When = { ok: true; span: Span } | { ok: false; error: string };

/** What `parseWhen` reads, for error messages and the tool's description. */
export const WHEN_FORMS = `an ISO date ("2026-11-03", "2026-11", "2026-11-03T14:00Z"), "today", "yesterday", "3 days ago", "2 weeks ago", "last week", "this month", "last year" or a weekday ("monday", "last friday")`;

const UNITS = { day: 1, week: 7, month: 0, year: 0 } as const;
type Unit = keyof typeof UNITS;
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

interface Ymd {
  y: number;
  m: number;
  d: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of `ms` in `zone`, as numbers (year, month, day, hour, minute, second). */
function wall(ms: number, zone: string): Record<string, number> {
  let f = formats.get(zone);
  if (!f) formats.set(zone, (f = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric", hourCycle: "h23" })));
  return Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
}

/** The calendar day `at` falls on in `zone`. */
function dayIn(at: Date, zone: string): Ymd {
  const p = wall(at.getTime(), zone);
  return { y: p.year!, m: p.month!, d: p.day! };
}

/** The zone's offset from UTC at `ms`, in ms (local wall time minus UTC). */
function offsetAt(ms: number, zone: string): number {
  const p = wall(ms, zone);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(ms / 1000) * 1000;
}

/** The instant local midnight starts the day `ymd` (out-of-range months and days roll over) in `zone`. */
function midnight(ymd: Ymd, zone: string): Date {
  return new Date(fromWall(Date.UTC(ymd.y, ymd.m - 1, ymd.d), zone));
}

/** The instant a wall-clock time (written as if UTC) is in `zone`. */
function fromWall(ms: number, zone: string): number {
  // Twice: the offset at the first guess may differ from the one at that time (a DST change between).
  return ms - offsetAt(ms - offsetAt(ms, zone), zone);
}

const addDays = (ymd: Ymd, n: number): Ymd => {
  const t = new Date(Date.UTC(ymd.y, ymd.m - 1, ymd.d + n));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
};
const weekday = (ymd: Ymd): number => new Date(Date.UTC(ymd.y, ymd.m - 1, ymd.d)).getUTCDay();
/** Weeks start on Monday. */
const mondayOf = (ymd: Ymd): Ymd => addDays(ymd, -((weekday(ymd) + 6) % 7));

function span(from: Ymd, to: Ymd, zone: string): When {
  return { ok: true, span: { start: midnight(from, zone), end: midnight(to, zone) } };
}

/** The span a unit `back` units before today covers (0: the current one). */
function unitSpan(unit: Unit, back: number, today: Ymd, zone: string): When {
  switch (unit) {
    case "day":
      return span(addDays(today, -back), addDays(today, 1 - back), zone);
    case "week": {
      const monday = addDays(mondayOf(today), -7 * back);
      return span(monday, addDays(monday, 7), zone);
    }
    case "month":
      return span({ y: today.y, m: today.m - back, d: 1 }, { y: today.y, m: today.m - back + 1, d: 1 }, zone);
    case "year":
      return span({ y: today.y - back, m: 1, d: 1 }, { y: today.y - back + 1, m: 1, d: 1 }, zone);
  }
}

const unitOf = (word: string): Unit | null => {
  const u = word.replace(/s$/, "");
  return u in UNITS ? (u as Unit) : null;
};

/**
 * The span `text` names, in `zone` at `now`: a day ("2026-11-03", "yesterday", "3 days ago",
 * "monday": the latest one before today), a week (Monday to Monday), a month, a year, or an
 * instant ("2026-11-03T14:00Z": a span of no length). Anything else is an error saying what is read.
 */
export function parseWhen(text: string, now: Date, zone = "UTC"): When {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ");
  const today = dayIn(now, zone);
  const bad: When = { ok: false, error: `"${text}" is not a date I can read. Write ${WHEN_FORMS}.` };
  let m: RegExpMatchArray | null;
  if ((m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t))) {
    const ymd = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
    if (ymd.m < 1 || ymd.m > 12 || ymd.d < 1 || ymd.d > new Date(Date.UTC(ymd.y, ymd.m, 0)).getUTCDate()) return bad;
    return span(ymd, addDays(ymd, 1), zone);
  }
  if ((m = /^(\d{4})-(\d{2})$/.exec(t))) {
    const y = Number(m[1]);
    const mo = Number(m[2]);
    if (mo < 1 || mo > 12) return bad;
    return span({ y, m: mo, d: 1 }, { y, m: mo + 1, d: 1 }, zone);
  }
  if (/^\d{4}-\d{2}-\d{2}t\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?$/.test(t)) {
    // Without a zone of its own, a time is the workspace's wall time.
    const hasZone = /(z|[+-]\d{2}:?\d{2})$/.test(t);
    const asUtc = new Date(hasZone ? t.toUpperCase() : `${t.toUpperCase()}Z`);
    if (Number.isNaN(asUtc.getTime())) return bad;
    const at = hasZone ? asUtc : new Date(fromWall(asUtc.getTime(), zone));
    return { ok: true, span: { start: at, end: at } };
  }
  if (t === "today" || t === "now") return unitSpan("day", 0, today, zone);
  if (t === "yesterday") return unitSpan("day", 1, today, zone);
  if ((m = /^(\d{1,4}|a|an|one) (days?|weeks?|months?|years?) ago$/.exec(t))) {
    const unit = unitOf(m[2]!);
    const count = /^\d/.test(m[1]!) ? Number(m[1]) : 1;
    return unit ? unitSpan(unit, count, today, zone) : bad;
  }
  if ((m = /^(last|this|past|previous) (week|month|year)$/.exec(t))) {
    return unitSpan(unitOf(m[2]!)!, m[1] === "this" ? 0 : 1, today, zone);
  }
  if ((m = /^(last |on )?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)$/.exec(t))) {
    // The latest such day before today ("monday" said on a Monday is a week ago).
    const back = (weekday(today) - WEEKDAYS.indexOf(m[2]!) + 7) % 7 || 7;
    return unitSpan("day", back, today, zone);
  }
  return bad;
}
