/**
 * Start-up catch-up on both databases: a real Core, its scheduler and job worker, a clock set to a
 * chosen moment (advancing in real time), and stand-in curator and report handlers. Only slots of
 * that chosen year are looked at: node-cron's real timers may fire a real slot meanwhile.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { recordingHandlers, type RecordedRun } from "../support/scheduled-handlers.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import type { Core } from "../../src/app/core.ts";
import type { ScheduleSettings } from "../../src/jobs/schedules.ts";

/** A clock that reads `iso` now and then advances with real time. */
const clockAt = (iso: string) => {
  const base = Date.parse(iso);
  const t0 = Date.now();
  return () => new Date(base + (Date.now() - t0));
};

const WORKER = { pollMs: 50, leaseMs: 10_000, concurrency: 2, backoffMs: 100 };

forEachDatabase("scheduled jobs: catch-up at start-up", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake?.close();
  });

  const core = (now: () => Date, schedules: ScheduleSettings, handlers: ReturnType<typeof recordingHandlers>["handlers"]): Core =>
    makeCore(getDb(), fake, { bundledSkillsDir: null, schedules, learning: { worker: WORKER } }, now, handlers);
  const of2031 = (runs: RecordedRun[]) => runs.filter((r) => r.slot.startsWith("2031-"));
  const keys = async (prefix: string) =>
    (await getDb().prisma.job.findMany({ where: { uniqueKey: { startsWith: prefix } }, orderBy: { uniqueKey: "asc" } })).map((j) => `${j.uniqueKey} ${j.status}`);

  it("catches nothing up on a fresh install: no slot was missed before cairn was first used", async () => {
    const now = clockAt("2031-03-11T10:30:00Z");
    const rec = recordingHandlers();
    const fresh = core(now, { curator: "0 * * * *", report: "0 9 * * 1-5", timezone: "UTC" }, rec.handlers);
    try {
      await fresh.startBackground();
      await fresh.learning.drain();
    } finally {
      await fresh.stopBackground(1_000);
    }
    expect(of2031(rec.runs)).toEqual([]);
    expect(await keys("curator:2031-")).toEqual([]);
    // From here on, cairn has been in use since 2020.
    await getDb().prisma.workspace.create({ data: { platform: "slack", externalId: `T-used-${Date.now()}`, createdAt: new Date("2020-01-01T00:00:00Z") } });
  });

  it("runs the latest missed slot once at start-up when less than one interval old, however many processes start; older slots are not made up for", async () => {
    // Tuesday 10:30: the hourly curator missed 09:00 and 10:00; the weekday report missed today's 09:00.
    const now = clockAt("2031-03-11T10:30:00Z");
    const schedules = { curator: "0 * * * *", report: "0 9 * * 1-5", timezone: "UTC" };
    const rec = recordingHandlers();
    const first = core(now, schedules, rec.handlers);
    const second = core(now, schedules, rec.handlers);
    try {
      await first.startBackground();
      await waitUntil("both caught-up slots run", () => of2031(rec.runs).length === 2, 15_000);
      // A second process (or a restart) within the same interval: the slots are queued already.
      await second.startBackground();
      await second.learning.drain();
      await first.learning.drain();
    } finally {
      await Promise.all([first.stopBackground(1_000), second.stopBackground(1_000)]);
    }
    expect(of2031(rec.runs).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: "curator", slot: "2031-03-11T10:00:00.000Z", dryRun: false },
      { kind: "report", slot: "2031-03-11T09:00:00.000Z" },
    ]);
    expect(await keys("curator:2031-")).toEqual(["curator:2031-03-11T10:00:00.000Z done"]);
    expect(await keys("report:2031-")).toEqual(["report:2031-03-11T09:00:00.000Z done"]);
    const job = await getDb().prisma.job.findUniqueOrThrow({ where: { uniqueKey: "curator:2031-03-11T10:00:00.000Z" } });
    expect(job).toMatchObject({ result: "archived 2 skills", attempts: 1 });
    expect(job.finishedAt!.getTime()).toBeGreaterThanOrEqual(job.startedAt!.getTime());
  });

  it("does not run a slot older than its interval: Friday's weekday report is not made up for on Monday morning", async () => {
    // Monday 08:00 in Paris: the weekday report last fired Friday 09:00 (71 h ago, its interval 24 h);
    // the Sunday-night curator fired 29 h ago, within its week.
    const now = clockAt("2031-03-17T07:00:00Z");
    const rec = recordingHandlers();
    const c = core(now, { curator: "0 3 * * 0", report: "0 9 * * 1-5", timezone: "Europe/Paris" }, rec.handlers);
    try {
      await c.startBackground();
      await waitUntil("the curator's slot run", () => of2031(rec.runs).length === 1, 15_000);
      await c.learning.drain();
    } finally {
      await c.stopBackground(1_000);
    }
    // 03:00 in Paris on Sunday 16 March is 02:00 UTC (winter time).
    expect(of2031(rec.runs)).toEqual([{ kind: "curator", slot: "2031-03-16T02:00:00.000Z", dryRun: false }]);
    expect(await keys("report:2031-03-14")).toEqual([]);
  });
});
