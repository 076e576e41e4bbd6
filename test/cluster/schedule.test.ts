/**
 * Two cairn processes on one PostgreSQL database (`npm run test:cluster`; part of `vitest run` too):
 * real child processes (node.ts), each with its own node-cron schedules and job worker, sharing only
 * the database, as replicas do. A curator slot (and a verify slot) every 2 seconds must run exactly once, whichever
 * process fires first; a process killed (SIGKILL) in the middle of a slot's run leaves that slot to
 * the other process, which runs it again once its lease has run out, and it finishes once.
 *
 * PostgreSQL only: several processes on one SQLite file is not a deployment cairn supports (each
 * process serialises its own transactions; see src/db/sqlite-gate.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { freshPostgres, postgresSuite } from "../support/db.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const EVERY_MS = 2_000;
const SLOTS = 20;
const LEASE_MS = 3_000;

interface Run {
  event: "start" | "finish";
  kind: string;
  slot: string;
  pid: number;
  at: string;
}

interface Node {
  child: ChildProcess;
  pid: number;
  stderr: string;
  exited: Promise<number | null>;
}

postgresSuite()("two cairn processes on one PostgreSQL database", () => {
  let pgdb: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Database;
  let fake: FakeAnthropic;
  let dir: string;
  const nodes: Node[] = [];

  beforeAll(async () => {
    pgdb = await freshPostgres();
    // Migrated here, once, before the processes start.
    db = await openDatabase(pgdb.url);
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "cairn-cluster-"));
  });
  afterAll(async () => {
    for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill("SIGKILL");
    await Promise.all(nodes.map((n) => n.exited));
    await db?.close();
    await fake?.close();
    await pgdb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function start(): Promise<Node> {
    const child = spawn(process.execPath, ["--import", "tsx", "test/cluster/node.ts"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DATABASE_URL: pgdb.url,
        ANTHROPIC_API_KEY: fake.apiKey,
        ANTHROPIC_BASE_URL: fake.url,
        LOG_LEVEL: "warn",
        CAIRN_CURATOR_CRON: "*/2 * * * * *",
        // The monthly review of memory due for confirmation, every 2 seconds here: once per slot too.
        CAIRN_VERIFY_CRON: "*/2 * * * * *",
        // Once a year: its only run is the slot start-up catches up (once, for both processes).
        CAIRN_REPORT_CRON: "0 0 0 1 1 *",
        CAIRN_TIMEZONE: "UTC",
        CLUSTER_RUNS_DIR: dir,
        CLUSTER_SLOW_FILE: join(dir, "slow"),
        CLUSTER_SLOW_MS: "20000",
        CLUSTER_LEASE_MS: String(LEASE_MS),
      },
    });
    const node: Node = {
      child,
      pid: child.pid!,
      stderr: "",
      exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
    };
    child.stderr!.on("data", (d: Buffer) => (node.stderr += d.toString()));
    nodes.push(node);
    let stdout = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    return waitUntil(`process ${node.pid} ready (stderr: ${node.stderr.slice(-500)})`, () => stdout.includes("ready") && node, 30_000);
  }

  const runs = (): Run[] =>
    readdirSync(dir)
      .filter((f) => f.startsWith("runs-"))
      .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
      .map((line) => JSON.parse(line) as Run)
      // One file per process: merged in the order things happened.
      .sort((x, y) => x.at.localeCompare(y.at));
  const finished = (kind: string) => runs().filter((r) => r.kind === kind && r.event === "finish");
  const slowSlot = (): string | null => {
    try {
      return readFileSync(join(dir, "slow.claimed"), "utf8");
    } catch {
      return null;
    }
  };

  it(
    "runs each 2-second slot exactly once over 20 slots, and a slot whose process is killed mid-run again once, on the other process, after its lease",
    async () => {
      const [a, b] = [await start(), await start()];

      // Twenty slots, fired by both processes, each run once.
      await waitUntil(`${SLOTS} curator slots run`, () => new Set(finished("curator").map((r) => r.slot)).size >= SLOTS, SLOTS * EVERY_MS + 30_000);

      // The next slot's run sleeps; its process is killed in the middle of it.
      writeFileSync(join(dir, "slow"), "");
      const slot = await waitUntil("a slow run started", () => slowSlot(), 15_000);
      const victim = await waitUntil("the slow run's process", () => runs().find((r) => r.kind === "curator" && r.event === "start" && r.slot === slot)?.pid, 5_000);
      const killed = victim === a!.pid ? a! : b!;
      const survivor = killed === a ? b! : a!;
      killed.child.kill("SIGKILL");
      await killed.exited;
      const killedAt = Date.now();

      // The survivor runs it again once the lease has run out, and goes on with the next slots alone.
      const rerun = await waitUntil("the killed slot run again", () => finished("curator").find((r) => r.slot === slot), LEASE_MS + 20_000);
      const waitedMs = Date.now() - killedAt;
      await waitUntil("two more slots after it", () => finished("curator").filter((r) => r.slot > slot).length >= 2, 20_000);
      survivor.child.kill("SIGTERM");
      expect(await survivor.exited, survivor.stderr).toBe(0);

      const all = runs();
      const curator = all.filter((r) => r.kind === "curator");
      const finishes = new Map<string, Run[]>();
      for (const r of curator.filter((r) => r.event === "finish")) finishes.set(r.slot, [...(finishes.get(r.slot) ?? []), r]);
      const slots = [...finishes.keys()].sort();
      expect(slots.length).toBeGreaterThanOrEqual(SLOTS + 1);
      // Every slot from the first to the last, 2 seconds apart, with none missing and none run twice.
      const first = Date.parse(slots[0]!);
      const last = Date.parse(slots.at(-1)!);
      expect(slots).toEqual(Array.from({ length: (last - first) / EVERY_MS + 1 }, (_, i) => new Date(first + i * EVERY_MS).toISOString()));
      expect([...finishes.values()].filter((f) => f.length !== 1)).toEqual([]);

      // The killed slot: started on the killed process, then on the survivor, finished once there.
      expect(curator.filter((r) => r.slot === slot && r.event === "start").map((r) => r.pid)).toEqual([killed.pid, survivor.pid]);
      expect(rerun.pid).toBe(survivor.pid);
      const jobs = await db.prisma.job.findMany({ where: { kind: "curator" } });
      const slowJob = jobs.find((j) => j.uniqueKey === `curator:${slot}`);
      expect(slowJob).toMatchObject({ status: "done", attempts: 2, result: `recorded by ${survivor.pid}` });
      // One job per slot; every other one claimed once; none failed.
      expect(new Set(jobs.map((j) => j.uniqueKey)).size).toBe(jobs.length);
      expect(jobs.filter((j) => j.uniqueKey !== slowJob!.uniqueKey && j.status === "done" && j.attempts !== 1)).toEqual([]);
      expect(jobs.filter((j) => j.status === "failed")).toEqual([]);

      // The yearly report's slot is within its interval, but this is a fresh install: nothing was
      // missed, so neither process caught it up (test/integration/scheduler.test.ts has a used one).
      const reports = all.filter((r) => r.kind === "report" && r.event === "finish");
      expect(reports).toEqual([]);

      // The verify slots: every one from the first to the last, each finished exactly once, one job each.
      const verifies = new Map<string, number>();
      for (const r of all.filter((r) => r.kind === "verify" && r.event === "finish")) verifies.set(r.slot, (verifies.get(r.slot) ?? 0) + 1);
      const verifySlots = [...verifies.keys()].sort();
      expect(verifySlots.length).toBeGreaterThanOrEqual(SLOTS);
      const firstVerify = Date.parse(verifySlots[0]!);
      expect(verifySlots).toEqual(Array.from({ length: (Date.parse(verifySlots.at(-1)!) - firstVerify) / EVERY_MS + 1 }, (_, i) => new Date(firstVerify + i * EVERY_MS).toISOString()));
      expect([...verifies.values()].filter((n) => n !== 1)).toEqual([]);
      const verifyJobs = await db.prisma.job.findMany({ where: { kind: "verify" } });
      expect(new Set(verifyJobs.map((j) => j.uniqueKey)).size).toBe(verifyJobs.length);
      expect(verifyJobs.filter((j) => j.status === "failed")).toEqual([]);

      const byProcess = (pid: number) => curator.filter((r) => r.event === "finish" && r.pid === pid).length;
      process.stdout.write(
        `cluster: ${slots.length} slots, ${curator.filter((r) => r.event === "finish").length} finished runs ` +
          `(${byProcess(a!.pid)} on one process, ${byProcess(b!.pid)} on the other), ${curator.filter((r) => r.event === "start").length} started; ` +
          `the killed slot ran again ${(waitedMs / 1000).toFixed(1)} s after the kill (lease ${LEASE_MS / 1000} s)\n`,
      );
    },
    150_000,
  );
});
