/**
 * `/cairn jobs` through the core's command entry (every platform's path): the schedules with their
 * last and next runs, an admin's manual run queued and run by the worker, a non-admin refused.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { recordingHandlers } from "../support/scheduled-handlers.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { parseCommandLine } from "../../src/ground/commands.ts";
import { formatWhen } from "../../src/commands/jobs.ts";

forEachDatabase("/cairn jobs", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("lists each schedule with its last and next runs; an admin's `jobs run report` queues and runs it, a non-admin's is refused", async () => {
    const rec = recordingHandlers();
    const core = makeCore(
      getDb(),
      fake,
      {
        bundledSkillsDir: null,
        access: accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] }),
        schedules: { curator: "0 3 * * 0", report: "0 9 * * 1", timezone: "Europe/Paris" },
        learning: { worker: { pollMs: 50, leaseMs: 10_000, concurrency: 2, backoffMs: 100 } },
      },
      undefined,
      rec.handlers,
    );
    // The worker only: without the schedules' catch-up, the only runs are the ones asked for here.
    core.learning.start();
    const ws = uniqueId("T");
    const as = (user: string, line: string) => {
      const cmd = parseCommandLine(line)!;
      return core.command(inboundFor({ workspace: ws, user, channel: "C1", isDm: false }, `/cairn ${line}`), cmd.name, cmd.args);
    };
    const manual = () => getDb().prisma.job.findMany({ where: { uniqueKey: { contains: ":manual:" } }, orderBy: { createdAt: "asc" } });
    try {
      const before = await as("UBOB", "jobs");
      expect(before.ephemeral).toBe(true);
      expect(before.text).toContain("**Scheduled jobs** (times in Europe/Paris)");
      const nextReport = core.scheduler.nextRun("report")!;
      expect(formatWhen(nextReport, "Europe/Paris")).toMatch(/^Mon \d{4}-\d\d-\d\d 09:00$/);
      expect(before.text).toContain(`- **report** \`0 9 * * 1\`: next ${formatWhen(nextReport, "Europe/Paris")} · last: never run`);
      expect(before.text).toMatch(/- \*\*curator\*\* `0 3 \* \* 0`: next Sun \d{4}-\d\d-\d\d 03:00 · last: never run/);

      const refused = await as("UBOB", "jobs run report");
      expect(refused.text).toBe("Only cairn admins can run scheduled jobs by hand. `jobs` shows when they run next.");
      expect(await manual()).toEqual([]);

      const queued = await as("UADMIN", "jobs run report");
      expect(queued.text).toMatch(/^Queued a report run now \(job \w+\)\./);
      await waitUntil("the report run", () => rec.runs.length === 1, 10_000);
      await waitUntil("the report job done", async () => (await manual())[0]?.status === "done", 10_000);
      const [job] = await manual();
      expect(job!.uniqueKey).toMatch(/^report:manual:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(job).toMatchObject({ kind: "report", status: "done", result: "posted to #team", attempts: 1 });
      expect(rec.runs).toEqual([{ kind: "report", slot: job!.uniqueKey!.slice("report:manual:".length), requestedBy: "slack:UADMIN" }]);

      const after = await as("UBOB", "jobs");
      expect(after.text).toContain(`- **report** \`0 9 * * 1\`: next ${formatWhen(nextReport, "Europe/Paris")} · last: done ${formatWhen(job!.startedAt!, "Europe/Paris")} (run by hand), took `);
      expect(after.text).toMatch(/took \d+\.\d s: posted to #team/);
      expect(after.text).toContain("**curator** `0 3 * * 0`: next Sun");
      expect(after.text).toMatch(/\*\*curator\*\*[^\n]*last: never run/);

      // The curator's dry run, as typed in Slack or the console; a dry run of the report is not a thing.
      expect((await as("UADMIN", "jobs run curator --dry-run")).text).toMatch(/^Queued a dry run of the curator now/);
      await waitUntil("the curator's dry run", () => rec.runs.length === 2, 10_000);
      expect(rec.runs[1]).toMatchObject({ kind: "curator", dryRun: true, requestedBy: "slack:UADMIN" });
      expect((await as("UADMIN", "jobs run report --dry-run")).text).toMatch(/^Usage: /);
      expect((await as("UADMIN", "jobs run backup")).text).toBe("Which job? `jobs run curator` or `jobs run report` or `jobs run verify` or `jobs run remind`.");
      expect(await manual()).toHaveLength(2);
    } finally {
      await core.stopBackground(1_000);
    }
  });
});
