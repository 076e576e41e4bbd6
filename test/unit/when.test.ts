/** src/history/when.ts: the dates a model writes in session_search's after/before, in a time zone. */
import { describe, expect, it } from "vitest";
import { parseWhen, type When } from "../../src/history/when.ts";

// Wednesday 4 November 2026, 10:30 UTC (New York: 05:30; Tokyo: 19:30).
const NOW = new Date("2026-11-04T10:30:00Z");

function span(w: When): [string, string] {
  if (!w.ok) throw new Error(w.error);
  return [w.span.start.toISOString(), w.span.end.toISOString()];
}

describe("parseWhen", () => {
  it("reads ISO days, months and instants; a day starts at the zone's midnight", () => {
    expect(span(parseWhen("2026-11-03", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
    expect(span(parseWhen("2026-11-03", NOW, "Asia/Tokyo"))).toEqual(["2026-11-02T15:00:00.000Z", "2026-11-03T15:00:00.000Z"]);
    expect(span(parseWhen("2026-02", NOW))).toEqual(["2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"]);
    expect(span(parseWhen("2026-12", NOW))).toEqual(["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(span(parseWhen("2026-11-03T14:00Z", NOW))).toEqual(["2026-11-03T14:00:00.000Z", "2026-11-03T14:00:00.000Z"]);
    // A time without a zone is the workspace's wall time.
    expect(span(parseWhen("2026-11-03T14:00", NOW, "Asia/Tokyo"))).toEqual(["2026-11-03T05:00:00.000Z", "2026-11-03T05:00:00.000Z"]);
  });

  it("reads today, yesterday and n units ago in the zone", () => {
    expect(span(parseWhen("today", NOW))).toEqual(["2026-11-04T00:00:00.000Z", "2026-11-05T00:00:00.000Z"]);
    expect(span(parseWhen(" Yesterday ", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
    expect(span(parseWhen("3 days ago", NOW))).toEqual(["2026-11-01T00:00:00.000Z", "2026-11-02T00:00:00.000Z"]);
    expect(span(parseWhen("a week ago", NOW))).toEqual(["2026-10-26T00:00:00.000Z", "2026-11-02T00:00:00.000Z"]);
    expect(span(parseWhen("2 months ago", NOW))).toEqual(["2026-09-01T00:00:00.000Z", "2026-10-01T00:00:00.000Z"]);
    // 10:30 UTC is 21:30 in Auckland (UTC+13 in November): its today is the 4th, its midnight 11:00 UTC on the 3rd.
    expect(span(parseWhen("today", NOW, "Pacific/Auckland"))).toEqual(["2026-11-03T11:00:00.000Z", "2026-11-04T11:00:00.000Z"]);
    // At 03:00 UTC it is still the 3rd in New York (22:00, UTC-5).
    expect(span(parseWhen("today", new Date("2026-11-04T03:00:00Z"), "America/New_York"))).toEqual(["2026-11-03T05:00:00.000Z", "2026-11-04T05:00:00.000Z"]);
  });

  it("reads weeks (Monday to Monday), months, years and weekdays", () => {
    expect(span(parseWhen("this week", NOW))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z"]);
    expect(span(parseWhen("last week", NOW))).toEqual(["2026-10-26T00:00:00.000Z", "2026-11-02T00:00:00.000Z"]);
    expect(span(parseWhen("last month", NOW))).toEqual(["2026-10-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"]);
    expect(span(parseWhen("this year", NOW))).toEqual(["2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(span(parseWhen("monday", NOW))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-03T00:00:00.000Z"]);
    // The same weekday as today is the one a week ago.
    expect(span(parseWhen("last wednesday", NOW))).toEqual(["2026-10-28T00:00:00.000Z", "2026-10-29T00:00:00.000Z"]);
  });

  it("follows summer time: the day the clocks change is 25 hours long", () => {
    // New York left summer time on 1 November 2026 (02:00 EDT became 01:00 EST).
    expect(span(parseWhen("2026-11-01", NOW, "America/New_York"))).toEqual(["2026-11-01T04:00:00.000Z", "2026-11-02T05:00:00.000Z"]);
  });

  it("reads a time as result lines show it (a space, minutes, UTC), and slashes in a date", () => {
    // session_search's lines stamp each message "2026-11-03 14:00 UTC": a model copies that back.
    expect(span(parseWhen("2026-11-03 14:00 UTC", NOW, "Asia/Tokyo"))).toEqual(["2026-11-03T14:00:00.000Z", "2026-11-03T14:00:00.000Z"]);
    expect(span(parseWhen("2026-11-03 14:00:30Z", NOW))).toEqual(["2026-11-03T14:00:30.000Z", "2026-11-03T14:00:30.000Z"]);
    expect(span(parseWhen("2026-11-03 14:00", NOW, "Asia/Tokyo"))).toEqual(["2026-11-03T05:00:00.000Z", "2026-11-03T05:00:00.000Z"]);
    expect(span(parseWhen("2026/11/03", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
  });

  it("reads month names, with or without a day and a year; without a year, the latest one not after today", () => {
    expect(span(parseWhen("November 2026", NOW))).toEqual(["2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"]);
    expect(span(parseWhen("sept 2026", NOW))).toEqual(["2026-09-01T00:00:00.000Z", "2026-10-01T00:00:00.000Z"]);
    expect(span(parseWhen("october", NOW))).toEqual(["2026-10-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"]);
    expect(span(parseWhen("november", NOW))).toEqual(["2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"]);
    expect(span(parseWhen("December", NOW))).toEqual(["2025-12-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"]);
    expect(span(parseWhen("Nov 3, 2026", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
    expect(span(parseWhen("November 3rd 2026", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
    expect(span(parseWhen("3 November 2026", NOW, "Asia/Tokyo"))).toEqual(["2026-11-02T15:00:00.000Z", "2026-11-03T15:00:00.000Z"]);
    expect(span(parseWhen("the 2nd of november", NOW))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-03T00:00:00.000Z"]);
    expect(span(parseWhen("nov 4", NOW))).toEqual(["2026-11-04T00:00:00.000Z", "2026-11-05T00:00:00.000Z"]);
    expect(span(parseWhen("nov 5", NOW))).toEqual(["2025-11-05T00:00:00.000Z", "2025-11-06T00:00:00.000Z"]);
    expect(span(parseWhen("2026", NOW))).toEqual(["2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    // A weekday before a date, and a month abbreviated with a full stop, as people and models write them.
    expect(span(parseWhen("Monday, November 2", NOW))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-03T00:00:00.000Z"]);
    expect(span(parseWhen("Tue Nov. 3, 2026", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-04T00:00:00.000Z"]);
    expect(span(parseWhen("this past monday", NOW))).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-03T00:00:00.000Z"]);
  });

  it("reads counts in words, hours and minutes ago, the last n units, and tomorrow", () => {
    expect(span(parseWhen("two weeks ago", NOW))).toEqual(["2026-10-19T00:00:00.000Z", "2026-10-26T00:00:00.000Z"]);
    expect(span(parseWhen("three days ago", NOW))).toEqual(["2026-11-01T00:00:00.000Z", "2026-11-02T00:00:00.000Z"]);
    // Hours and minutes are instants, not calendar spans.
    expect(span(parseWhen("2 hours ago", NOW))).toEqual(["2026-11-04T08:30:00.000Z", "2026-11-04T08:30:00.000Z"]);
    expect(span(parseWhen("an hour ago", NOW))).toEqual(["2026-11-04T09:30:00.000Z", "2026-11-04T09:30:00.000Z"]);
    expect(span(parseWhen("45 minutes ago", NOW))).toEqual(["2026-11-04T09:45:00.000Z", "2026-11-04T09:45:00.000Z"]);
    // The last n days: from the start of the day n days back to the end of today.
    expect(span(parseWhen("last 7 days", NOW))).toEqual(["2026-10-28T00:00:00.000Z", "2026-11-05T00:00:00.000Z"]);
    expect(span(parseWhen("the past two weeks", NOW))).toEqual(["2026-10-19T00:00:00.000Z", "2026-11-09T00:00:00.000Z"]);
    expect(span(parseWhen("past 24 hours", NOW))).toEqual(["2026-11-03T10:30:00.000Z", "2026-11-04T10:30:00.000Z"]);
    expect(span(parseWhen("the past hour", NOW))).toEqual(["2026-11-04T09:30:00.000Z", "2026-11-04T10:30:00.000Z"]);
    // "last week" stays the calendar week before this one; "the past day" is yesterday and today.
    expect(span(parseWhen("past day", NOW))).toEqual(["2026-11-03T00:00:00.000Z", "2026-11-05T00:00:00.000Z"]);
    expect(span(parseWhen("tomorrow", NOW, "Asia/Tokyo"))).toEqual(["2026-11-04T15:00:00.000Z", "2026-11-05T15:00:00.000Z"]);
  });

  it("reads a leading since, from, until or on as the date after it", () => {
    expect(span(parseWhen("since monday", NOW))).toEqual(span(parseWhen("monday", NOW)));
    expect(span(parseWhen("from 2026-11-01", NOW))).toEqual(span(parseWhen("2026-11-01", NOW)));
    expect(span(parseWhen("until last week", NOW))).toEqual(span(parseWhen("last week", NOW)));
    expect(span(parseWhen("in october 2026", NOW))).toEqual(span(parseWhen("2026-10", NOW)));
  });

  it("answers anything else with an error saying what it reads", () => {
    for (const text of ["", "soon", "2026-13-01", "2026-02-30", "next week", "3 fortnights ago", "2026-11-03T25:00", "february 30 2026", "smarch 2026", "since", "13 hours", "11/03/2026", "20260", "the 45th of may"]) {
      const w = parseWhen(text, NOW);
      expect(w.ok, text).toBe(false);
      if (!w.ok) expect(w.error).toMatch(/not a date I can read\. Write an ISO date/);
    }
  });
});
