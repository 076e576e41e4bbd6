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

  it("answers anything else with an error saying what it reads", () => {
    for (const text of ["", "soon", "2026-13-01", "2026-02-30", "next week", "3 fortnights ago", "2026-11-03T25:00"]) {
      const w = parseWhen(text, NOW);
      expect(w.ok, text).toBe(false);
      if (!w.ok) expect(w.error).toMatch(/not a date I can read\. Write an ISO date/);
    }
  });
});
