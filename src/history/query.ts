/**
 * What a search query asks for: its ranking keys (Porter stems, CJK bigrams), the words the
 * databases' full-text indexes get, the dates it names and the words that may name a person.
 */
import { CJK_RUNS, STOP_WORDS, tokenize } from "./text.ts";
import { otherForms } from "./irregular.ts";

export interface QueryTerm {
  /** Ranking key (stem). */
  key: string;
  /** A folded surface form of the key, for the database's own full-text query (it stems itself). */
  word: string;
}

/**
 * A date named in the query; `day` and `year` are null when not given ("in June"), `month` when
 * only a year is ("in 2023").
 */
export interface DateHint {
  month: number | null;
  day: number | null;
  year: number | null;
}

export interface AnalyzedQuery {
  /** Latin-script terms, stop words out (unless nothing else is left), one per stem. */
  terms: QueryTerm[];
  /** CJK bigrams (and lone characters). */
  grams: string[];
  /** The query's CJK runs as written, for substring (trigram) lookups. */
  cjkRuns: string[];
  dates: DateHint[];
  /** Folded words that may be a person's name ("alice"); resolved against the workspace's people. */
  nameWords: string[];
  /** The query asks when something happened ("when did we ship ...", "how long ago", "which month"). */
  asksWhen: boolean;
}

/** Upper bounds that keep a pasted paragraph from turning into a huge database query. */
const MAX_TERMS = 32;
const MAX_GRAMS = 48;

export function analyzeQuery(query: string): AnalyzedQuery {
  const tokens = tokenize(query.normalize("NFKC"));
  const latin = tokens.filter((t) => !t.cjk);
  const kept = latin.filter((t) => !STOP_WORDS.has(t.word));
  // A query of only stop words ("the who") still searches for them rather than for nothing.
  const source = kept.length > 0 ? kept : latin;
  const terms = new Map<string, QueryTerm>();
  for (const t of source) if (!terms.has(t.key)) terms.set(t.key, { key: t.key, word: t.word });
  // The databases stem for themselves and do not join "went" to "go": the other forms of an
  // irregular word are searched for too, under the same ranking key.
  const variants = [...terms.values()].flatMap((t) => otherForms(t.word).map((word) => ({ key: t.key, word })));
  const grams = [...new Set(tokens.filter((t) => t.cjk).map((t) => t.key))];
  return {
    terms: [...terms.values(), ...variants].slice(0, MAX_TERMS),
    grams: grams.slice(0, MAX_GRAMS),
    cjkRuns: [...new Set(query.normalize("NFKC").match(CJK_RUNS) ?? [])].slice(0, 8),
    dates: parseDates(query),
    nameWords: [...new Set(kept.map((t) => t.word).filter((w) => w.length >= 2 && !/^\d+$/.test(w)))],
    asksWhen: WHEN_QUESTION.test(query),
  };
}

// Months that say when in a message; "may" is left out, far more often the verb there.
const MONTH_NAMES = "january|february|march|april|june|july|august|september|october|november|december";

/**
 * A question about time: its answer is a message that says when ("we shipped it yesterday"). "When"
 * asks only where a question or clause starts ("when did we ...", "ok, when is ...", "since when"):
 * "what happens when the cache is full?" is not about time.
 */
const WHEN_QUESTION = /(?:^|[,;:.!?(]\s*|\b(?:and|so|but|or|since|until|by)\s+)when\b|\bhow long\b|\b(?:what|which)\s+(?:year|month|week|day|date|time)\b/i;

/**
 * Words that place a message in time relative to when it was written, or name a day or month:
 * "yesterday", "last week", "two days ago", "on Friday", "next month", "in March".
 */
const TIME_WORDS = new RegExp(
  `\\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|the other day|(?:\\d+|a|an|one|two|three|four|five|six|few|couple of)\\s+(?:days?|weeks?|months?|years?)|weekends?|(?:last|next|this|past|coming)\\s+(?:week|weekend|month|year|night|morning|evening|summer|winter|spring|fall|autumn|time|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|${MONTH_NAMES})\\b`,
  "i",
);

/** Whether a message says when (see TIME_WORDS). */
export function saysWhen(text: string): boolean {
  return TIME_WORDS.test(text);
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH = "(january|february|march|april|may|june|july|august|september|sept|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)\\.?";
const DAY = "(\\d{1,2})(?:st|nd|rd|th)?";
const YEAR = "((?:19|20)\\d\\d)";
const DAY_MONTH = new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH}(?:,?\\s+${YEAR})?\\b`, "gi");
const MONTH_DAY = new RegExp(`\\b${MONTH}\\s+${DAY}\\b(?:,?\\s+${YEAR}\\b)?`, "gi");
const MONTH_YEAR = new RegExp(`\\b${MONTH}\\s+${YEAR}\\b`, "gi");
const IN_MONTH = new RegExp(`\\b(?:in|during|since|last|this|early|late|mid)\\s+${MONTH}\\b`, "gi");
const TO = "\\s*(?:-|–|to|and|until|till|through)\\s*";
/** "11-15 August 2023", "between 11 and 15 August", "August 11 to 15", "August 11 and August 15 2023". */
const DAYS_MONTH = new RegExp(`\\b${DAY}${TO}${DAY}\\s+(?:of\\s+)?${MONTH}(?:,?\\s+${YEAR})?\\b`, "gi");
const MONTH_DAYS = new RegExp(`\\b${MONTH}\\s+${DAY}${TO}(?:${MONTH}\\s+)?${DAY}\\b(?:,?\\s+${YEAR}\\b)?`, "gi");
/** A year on its own after a word that makes it one ("in 2023", "summer 2021"), not any four digits. */
const YEAR_ONLY = /\b(?:in|during|since|from|until|before|after|by|of|early|late|mid|spring|summer|fall|autumn|winter)\s+((?:19|20)\d\d)\b/gi;
const ISO = /\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b/g;

function monthIndex(name: string): number {
  return MONTHS.indexOf(name.toLowerCase().slice(0, 3));
}

/**
 * Dates written out in the query: "13 October 2023", "October 13, 2023", "in June", "May 2023",
 * "2023-10-13", ranges of days ("between 11 and 15 August"), a year alone ("in 2023"). Bare "may"
 * is the verb far more often than the month, so it needs a day or year.
 */
export function parseDates(query: string): DateHint[] {
  const found = new Map<string, DateHint>();
  const add = (month: number, day: number | null, year: number | null): void => {
    if (month < 0 || month > 11 || (day !== null && (day < 1 || day > 31))) return;
    found.set(`${year}-${month}-${day}`, { month, day, year });
  };
  const num = (s: string | undefined): number | null => (s === undefined ? null : Number(s));
  for (const m of query.matchAll(ISO)) add(Number(m[2]) - 1, Number(m[3]), Number(m[1]));
  for (const m of query.matchAll(DAY_MONTH)) add(monthIndex(m[2]!), num(m[1]), num(m[3]));
  for (const m of query.matchAll(MONTH_DAY)) add(monthIndex(m[1]!), num(m[2]), num(m[3]));
  for (const m of query.matchAll(MONTH_YEAR)) add(monthIndex(m[1]!), null, num(m[2]));
  // A range of days in one month: every day of it (at most a month's worth).
  const range = (month: number, from: number | null, to: number | null, year: number | null): void => {
    if (from === null || to === null || to < from) return;
    for (let day = from; day <= Math.min(to, from + 30); day++) add(month, day, year);
  };
  for (const m of query.matchAll(DAYS_MONTH)) range(monthIndex(m[3]!), num(m[1]), num(m[2]), num(m[4]));
  for (const m of query.matchAll(MONTH_DAYS)) {
    if (m[3] !== undefined && monthIndex(m[3]) !== monthIndex(m[1]!)) continue;
    range(monthIndex(m[1]!), num(m[2]), num(m[4]), num(m[5]));
  }
  for (const m of query.matchAll(IN_MONTH)) {
    if (m[1]!.toLowerCase().startsWith("may")) continue;
    add(monthIndex(m[1]!), null, null);
  }
  // "13 October 2023" also reads as "October 2023": keep only the most specific reading of a month.
  const all = [...found.values()];
  const covers = (o: DateHint, d: DateHint): boolean =>
    o !== d && o.month === d.month && (d.year === null || d.year === o.year) && (d.day === null || d.day === o.day) && (o.day !== null) >= (d.day !== null) && (o.year !== null) >= (d.year !== null);
  const out = all.filter((d) => !all.some((o) => covers(o, d) && (o.day !== d.day || o.year !== d.year)));
  // A year on its own ("in 2023"), unless it is already part of a date above.
  for (const m of query.matchAll(YEAR_ONLY)) {
    const year = Number(m[1]);
    if (!out.some((d) => d.year === year)) out.push({ month: null, day: null, year });
  }
  return out;
}

/** A message written in a year the query names on its own ("in 2023"): a year says less than a month. */
const YEAR_ONLY_MATCH = 0.25;

/** How well a message's time matches the query's dates: 0 (none) to 1.25 (same day, same year). */
export function dateMatch(at: Date, dates: readonly DateHint[]): number {
  let best = 0;
  for (const d of dates) {
    if (d.month === null) {
      if (at.getUTCFullYear() === d.year) best = Math.max(best, YEAR_ONLY_MATCH);
      continue;
    }
    if (at.getUTCMonth() !== d.month) continue;
    let s = 0.5;
    if (d.year !== null && at.getUTCFullYear() === d.year) s += 0.25;
    // ±1 day: a session that ran past midnight, or a different time zone.
    if (d.day !== null && Math.abs(at.getUTCDate() - d.day) <= 1) s += 0.5;
    best = Math.max(best, s);
  }
  return best;
}
