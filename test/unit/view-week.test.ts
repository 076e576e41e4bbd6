/** The Home tab's "This week": the latest report's stored numbers, read back through a schema. */
import { expect, it } from "vitest";
import { weekLines } from "../../src/views/week.ts";

const period = { periodStart: new Date("2026-11-23T09:00:00Z"), periodEnd: new Date("2026-11-30T09:00:00Z") };
const weeks = [
  { start: "2026-10-05", replies: 10, corrections: 2, per100: 20 },
  { start: "2026-11-23", replies: 40, corrections: 1, per100: 2.5 },
];

it("shows the stored week's figures and the trend of corrections per 100 replies", () => {
  const data = JSON.stringify({
    metrics: { periodStart: "2026-11-23", periodEnd: "2026-11-30", weeks, lessons: { proposed: 3, approved: 2, promoted: 1, private: 0 }, rules: { added: 1, archived: 0, active: 4 }, skills: { created: 2, patched: 5 } },
  });
  const lines = weekLines({ ...period, data });
  expect(lines[0]).toBe("Week of 2026-11-23 to 2026-11-30");
  expect(lines[1]).toBe("Replies: **40** · corrections: **1** (2.5 per 100 replies)");
  expect(lines[2]).toMatch(/last 2 weeks: `█▂`/);
  expect(lines[3]).toBe("Lessons: 3 proposed, 2 approved, 1 promoted · team rules: 1 added, 0 archived, 4 in force");
  expect(lines[4]).toMatch(/^Skills: 2 created, 5 patched/);
});

it("says there is none yet, and falls back to the dates when the stored data does not parse", () => {
  expect(weekLines(null)).toEqual(["No weekly report yet: the first one is made at the next scheduled run."]);
  expect(weekLines({ ...period, data: "{not json" })).toEqual(["Week of 2026-11-23 to 2026-11-30: `/cairn report` shows the report."]);
  expect(weekLines({ ...period, data: JSON.stringify({ metrics: { weeks: [] } }) })).toHaveLength(1);
});
