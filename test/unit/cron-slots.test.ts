/** The backwards walk over cron slots, checked against node-cron's own forward runs. */
import { describe, expect, it } from "vitest";
import cron from "node-cron";
import { catchUpSlot, previousFire, withMatcher, type CronSpec } from "../../src/jobs/cron-slots.ts";
import { payloadFor, slotIso, slotKey, timeZoneOf } from "../../src/jobs/schedules.ts";

const spec = (expression: string, timezone = "UTC"): CronSpec => ({ expression, timezone });
const prev = (s: CronSpec, before: string | Date) => withMatcher(s, (match) => previousFire(s, new Date(before), match)?.toISOString() ?? null);
const catchUp = (s: CronSpec, now: string) => withMatcher(s, (match) => catchUpSlot(s, new Date(now), match)?.toISOString() ?? null);

describe("cron slots", () => {
  it("inverts node-cron's next runs: six-field, zones, summer-time changes, last-day and nth-weekday expressions", () => {
    const cases: [string, string, number][] = [
      ["0 3 * * 0", "UTC", 20],
      ["*/2 * * * * *", "UTC", 50],
      ["15 */7 * * * *", "Asia/Kolkata", 50],
      // A daily time inside the hour skipped each spring, and a range over the hour repeated each autumn.
      ["30 2 * * *", "America/New_York", 400],
      ["*/20 1-2 * * *", "America/New_York", 1200],
      ["0 30 1 * * *", "Europe/London", 400],
      ["0 0 L * *", "Australia/Lord_Howe", 14],
      ["0 0 9 * * 1#2", "Pacific/Chatham", 14],
      ["0 0 12 * * mon-fri", "America/Sao_Paulo", 60],
    ];
    for (const [expression, timezone, count] of cases) {
      const task = cron.createTask(expression, () => undefined, { timezone });
      try {
        const runs = task.getNextRuns(count);
        const s = spec(expression, timezone);
        for (let k = 1; k < runs.length; k++) {
          const expected = runs[k - 1]!.toISOString();
          expect(previousFire(s, runs[k]!, (at) => task.match(at))?.toISOString(), `${expression} ${timezone} before ${runs[k]!.toISOString()}`).toBe(expected);
          expect(previousFire(s, new Date(runs[k]!.getTime() - 1), (at) => task.match(at))?.toISOString()).toBe(expected);
        }
      } finally {
        void task.destroy();
      }
    }
    // Throwaway matchers are destroyed: node-cron's registry keeps none of them.
    expect(cron.getTasks().size).toBe(0);
  });

  it("finds the slot before an instant in the schedule's zone", () => {
    // Monday 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer.
    expect(prev(spec("0 9 * * 1", "Europe/Paris"), "2031-01-08T00:00:00Z")).toBe("2031-01-06T08:00:00.000Z");
    expect(prev(spec("0 9 * * 1", "Europe/Paris"), "2031-07-09T00:00:00Z")).toBe("2031-07-07T07:00:00.000Z");
    expect(prev(spec("0 0 29 2 *"), "2031-01-01T00:00:00Z")).toBe("2028-02-29T00:00:00.000Z");
  });

  it("catches up the latest slot at or before now if less than one interval old, and no older one", () => {
    // Hourly, at 10:30: 10:00 (09:00 is older than an interval).
    expect(catchUp(spec("0 * * * *"), "2031-03-11T10:30:00Z")).toBe("2031-03-11T10:00:00.000Z");
    // A slot at the very second of start-up is caught up (node-cron's timer starts after it).
    expect(catchUp(spec("0 * * * *"), "2031-03-11T10:00:00.400Z")).toBe("2031-03-11T10:00:00.000Z");
    // Weekly: the last Sunday's, days later.
    expect(catchUp(spec("0 3 * * 0"), "2031-03-15T23:00:00Z")).toBe("2031-03-09T03:00:00.000Z");
    // Weekdays: Tuesday morning catches up Monday's (its interval is Friday to Monday, 72 h)...
    expect(catchUp(spec("0 9 * * 1-5"), "2031-03-11T08:00:00Z")).toBe("2031-03-10T09:00:00.000Z");
    // ...but Monday morning does not catch up Friday's (71 h old, its interval 24 h).
    expect(catchUp(spec("0 9 * * 1-5"), "2031-03-17T08:00:00Z")).toBeNull();
    // Every two seconds, with seconds.
    expect(catchUp(spec("*/2 * * * * *"), "2031-03-11T10:00:03.900Z")).toBe("2031-03-11T10:00:02.000Z");
  });

  it("keys a slot by its instant to the second, and checks zones", () => {
    expect(slotIso(new Date("2031-03-11T10:00:00.731Z"))).toBe("2031-03-11T10:00:00.000Z");
    expect(slotKey("report", "2031-03-11T10:00:00.000Z")).toBe("report:2031-03-11T10:00:00.000Z");
    expect(payloadFor("curator", "s", { dryRun: true, requestedBy: "slack:U1" })).toEqual({ slot: "s", dryRun: true, requestedBy: "slack:U1" });
    expect(payloadFor("report", "s", { dryRun: true })).toEqual({ slot: "s" });
    expect(timeZoneOf("europe/paris")).toBe("Europe/Paris");
    expect(timeZoneOf("UTC")).toBe("UTC");
    expect(timeZoneOf("Mars/Olympus")).toBeNull();
    expect(timeZoneOf("+01:00")).toBeNull();
  });
});
