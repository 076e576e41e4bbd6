/**
 * Dates as a model writes them ("2026-11-03", "yesterday", "last week", "3 days ago", "Nov 3",
 * "2026-11-03 14:00 UTC" as result lines stamp messages), read as a span of time in a time zone:
 * session_search's `after` and `before`. Pure: the caller hands in now and the zone
 * (CAIRN_TIMEZONE), so a test pins both. A date without a year is the latest one not after today:
 * history is searched backwards.
 */

/** [start, end) in UTC instants. */
export interface Span {
  start: Date;
  end: Date;
}

export type When = { ok: true; span: Span } | { ok: false; error: string };

/** What `parseWhen` reads, for error messages and the tool's description. */
export const WHEN_FORMS = `an ISO date ("2026-11-03", "2026-11", "2026-11-03 14:00 UTC"), a month or day by name ("November 2026", "Nov 3"), "today", "yesterday", "3 days ago", "2 hours ago", "last 7 days", "last week", "this month", "last year" or a weekday ("monday", "last friday")`;

const UNITS = { day: 1, week: 7, month: 0, year: 0 } as const;
/** Units that are instants back from now, not calendar spans. */
const CLOCK_MS = { minute: 60_000, hour: 3_600_000 } as const;
const COUNT_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/** "sept", "November" and the like: a month named by at least its first three letters. */
const MONTH_WORD = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
/** A word before the date that says which side it bounds; the side is the argument's, so it is read past. */
const LEAD = /^(?:since|from|after|before|until|till|by|on|in|starting)\s+(?=\S)/;
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

/** Month `m` of year `y` (m may run past 12 or below 1: midnight() carries it into the year). */
const monthSpan = (y: number, m: number, zone: string): When => span({ y, m, d: 1 }, { y, m: m + 1, d: 1 }, zone);
/** Year `y`. */
const yearSpan = (y: number, zone: string): When => span({ y, m: 1, d: 1 }, { y: y + 1, m: 1, d: 1 }, zone);

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
      return monthSpan(today.y, today.m - back, zone);
    case "year":
      return yearSpan(today.y - back, zone);
  }
}

/** "3", "a", "an" or a number in words up to twelve; null for anything else. */
function countOf(word: string): number | null {
  if (/^\d{1,4}$/.test(word)) return Number(word);
  if (word === "a" || word === "an") return 1;
  const i = COUNT_WORDS.indexOf(word);
  return i < 0 ? null : i + 1;
}

const isDay = (ymd: Ymd): boolean => ymd.m >= 1 && ymd.m <= 12 && ymd.d >= 1 && ymd.d <= new Date(Date.UTC(ymd.y, ymd.m, 0)).getUTCDate();
const later = (a: Ymd, b: Ymd): boolean => a.y * 10_000 + a.m * 100 + a.d > b.y * 10_000 + b.m * 100 + b.d;

/** "Nov 3, 2026", "november": month first. */
const MONTH_DAY = new RegExp(`^${MONTH_WORD}(?: (\\d{1,2})(?:st|nd|rd|th)?)?,?(?: (\\d{4}))?$`);
/** "3 November 2026", "the 2nd of november": day first. */
const DAY_MONTH = new RegExp(`^(?:the )?(\\d{1,2})(?:st|nd|rd|th)?(?: of)? ${MONTH_WORD},?(?: (\\d{4}))?$`);

/** "November 2026", "nov", "Nov 3, 2026", "3rd November", "the 2nd of november": a month or a day (null: not one). */
function namedDate(t: string, today: Ymd, zone: string): When | null {
  const m = MONTH_DAY.exec(t) ?? DAY_MONTH.exec(t);
  if (!m) return null;
  const [month, day] = /^\d/.test(m[1]!) ? [m[2]!, m[1]] : [m[1]!, m[2]];
  const mo = MONTHS.indexOf(month.slice(0, 3)) + 1;
  const year = m[3] ? Number(m[3]) : null;
  if (day === undefined) {
    const y = year ?? (mo > today.m ? today.y - 1 : today.y);
    return monthSpan(y, mo, zone);
  }
  let ymd = { y: year ?? today.y, m: mo, d: Number(day) };
  if (year === null && later(ymd, today)) ymd = { ...ymd, y: today.y - 1 };
  return isDay(ymd) ? span(ymd, addDays(ymd, 1), zone) : null;
}

/** A clock unit's length ("minutes", "mins", "hour", "hrs"); null for a calendar unit. */
function clockMs(word: string): number | null {
  if (/^(minutes?|mins?)$/.test(word)) return CLOCK_MS.minute;
  return /^(hours?|hrs?)$/.test(word) ? CLOCK_MS.hour : null;
}

/**
 * "3 days ago", "two weeks ago" (that day or week), "2 hours ago" (an instant), "last 7 days",
 * "past two weeks" (from that far back to the end of the current one).
 */
function countedSpan(t: string, now: Date, today: Ymd, zone: string): When | null {
  let m = /^(\S+) (\S+) ago$/.exec(t);
  if (m) {
    const n = countOf(m[1]!);
    if (n === null) return null;
    const ms = clockMs(m[2]!);
    if (ms !== null) {
      const at = new Date(now.getTime() - n * ms);
      return { ok: true, span: { start: at, end: at } };
    }
    const unit = unitOf(m[2]!);
    return unit ? unitSpan(unit, n, today, zone) : null;
  }
  m = /^(?:the )?(?:last|past|previous) (?:(\S+) )?(\S+)$/.exec(t);
  if (!m) return null;
  // "the past hour": one.
  const n = m[1] === undefined ? 1 : countOf(m[1]);
  if (n === null) return null;
  const ms = clockMs(m[2]!);
  if (ms !== null) return { ok: true, span: { start: new Date(now.getTime() - n * ms), end: now } };
  const unit = unitOf(m[2]!);
  if (!unit) return null;
  const from = unitSpan(unit, n, today, zone);
  const to = unitSpan(unit, 0, today, zone);
  return from.ok && to.ok ? { ok: true, span: { start: from.span.start, end: to.span.end } } : null;
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
  const t = text
    .trim()
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(LEAD, "")
    // "Monday, November 2", "Tue Nov. 3": the date decides; the weekday and the stop add nothing.
    .replace(/^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,? (?=\S)(?!(?:last|past|this|ago)\b)/, "")
    .replace(/\b(jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\./g, "$1");
  const today = dayIn(now, zone);
  const bad: When = { ok: false, error: `"${text}" is not a date I can read. Write ${WHEN_FORMS}.` };
  let m: RegExpMatchArray | null;
  if ((m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(t))) {
    const ymd = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
    if (!isDay(ymd)) return bad;
    return span(ymd, addDays(ymd, 1), zone);
  }
  if ((m = /^(\d{4})-(\d{2})$/.exec(t))) {
    const y = Number(m[1]);
    const mo = Number(m[2]);
    if (mo < 1 || mo > 12) return bad;
    return monthSpan(y, mo, zone);
  }
  if ((m = /^(\d{4})$/.exec(t))) return yearSpan(Number(m[1]), zone);
  // "2026-11-03T14:00Z", and as result lines stamp messages: "2026-11-03 14:00 UTC".
  if ((m = /^(\d{4}-\d{2}-\d{2})[t ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) ?(z|utc|[+-]\d{2}:?\d{2})?$/.exec(t))) {
    // Without a zone of its own, a time is the workspace's wall time.
    const own = m[3] === "utc" ? "z" : m[3];
    const asUtc = new Date(`${m[1]}T${m[2]}${own ? own.toUpperCase() : "Z"}`);
    if (Number.isNaN(asUtc.getTime())) return bad;
    const at = own ? asUtc : new Date(fromWall(asUtc.getTime(), zone));
    return { ok: true, span: { start: at, end: at } };
  }
  if (t === "today" || t === "now") return unitSpan("day", 0, today, zone);
  if (t === "yesterday") return unitSpan("day", 1, today, zone);
  if (t === "tomorrow") return unitSpan("day", -1, today, zone);
  if ((m = /^(last|this|past|previous) (week|month|year)$/.exec(t))) {
    return unitSpan(unitOf(m[2]!)!, m[1] === "this" ? 0 : 1, today, zone);
  }
  if ((m = /^(last |on |past |this past )?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)$/.exec(t))) {
    // The latest such day before today ("monday" said on a Monday is a week ago).
    const back = (weekday(today) - WEEKDAYS.indexOf(m[2]!) + 7) % 7 || 7;
    return unitSpan("day", back, today, zone);
  }
  const named = namedDate(t, today, zone) ?? countedSpan(t, now, today, zone);
  return named?.ok ? named : bad;
}
