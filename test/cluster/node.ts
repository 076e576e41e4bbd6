/**
 * One cairn process of the cluster test (schedule.test.ts starts two with `node --import tsx`):
 * a real Core on DATABASE_URL, its settings from the environment as `npm start` reads them, the
 * model a fake on 127.0.0.1, and test handlers for the curator, report and verify kinds that record each
 * run in this process's own file, `runs-<pid>.jsonl` in CLUSTER_RUNS_DIR (one writer per file, so
 * lines never interleave; appended synchronously, so a SIGKILL loses nothing written).
 *
 * The slow run: once the file CLUSTER_SLOW_FILE exists, the first curator run to create
 * `<it>.claimed` (exclusive create: one process wins) sleeps CLUSTER_SLOW_MS, long enough for the
 * test to kill this process mid-run. Every other run is immediate.
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { loadConfig } from "../../src/app/config.ts";
import { agentSettings } from "../../src/app/settings.ts";
import { openDatabase } from "../../src/db/client.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { Core } from "../../src/app/core.ts";
import { createLogger } from "../../src/ground/log.ts";
import { defineJob } from "../../src/jobs/worker.ts";
import { DEFAULT_LEARNING } from "../../src/learning/settings.ts";

const env = z
  .object({
    CLUSTER_RUNS_DIR: z.string().min(1),
    CLUSTER_SLOW_FILE: z.string().min(1),
    CLUSTER_SLOW_MS: z.coerce.number().int().positive(),
    CLUSTER_LEASE_MS: z.coerce.number().int().positive(),
  })
  .parse(process.env);

const cfg = loadConfig();
const log = createLogger(cfg.LOG_LEVEL);
const runsFile = join(env.CLUSTER_RUNS_DIR, `runs-${process.pid}.jsonl`);

function record(event: "start" | "finish", kind: string, slot: string): void {
  appendFileSync(runsFile, `${JSON.stringify({ event, kind, slot, pid: process.pid, at: new Date().toISOString() })}\n`);
}

/** True for the one curator run, across processes, that is to be slow. */
function slowRun(slot: string): boolean {
  if (!existsSync(env.CLUSTER_SLOW_FILE)) return false;
  try {
    writeFileSync(`${env.CLUSTER_SLOW_FILE}.claimed`, slot, { flag: "wx" });
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

const curator = defineJob({
  kind: "curator",
  payload: z.object({ slot: z.string(), dryRun: z.boolean(), requestedBy: z.string().optional() }),
  async run({ slot }, signal) {
    record("start", "curator", slot);
    if (slowRun(slot)) await sleep(env.CLUSTER_SLOW_MS, signal);
    record("finish", "curator", slot);
    return `recorded by ${process.pid}`;
  },
});

const report = defineJob({
  kind: "report",
  payload: z.object({ slot: z.string(), requestedBy: z.string().optional() }),
  async run({ slot }) {
    record("start", "report", slot);
    record("finish", "report", slot);
    return `recorded by ${process.pid}`;
  },
});

// The monthly review of memory due for confirmation (issue 27): run every 2 seconds here too.
const verify = defineJob({
  kind: "verify",
  payload: z.object({ slot: z.string(), requestedBy: z.string().optional() }),
  async run({ slot }) {
    record("start", "verify", slot);
    record("finish", "verify", slot);
    return `recorded by ${process.pid}`;
  },
});

const database = await openDatabase(cfg.DATABASE_URL);
const model = createModelClient({ apiKey: cfg.ANTHROPIC_API_KEY ?? "unused", ...(cfg.ANTHROPIC_BASE_URL ? { baseURL: cfg.ANTHROPIC_BASE_URL } : {}), logger: log });
const settings = agentSettings(cfg);
// One job at a time: when the slow run is killed, this process held nothing else.
const worker = { ...DEFAULT_LEARNING.worker, pollMs: 200, leaseMs: env.CLUSTER_LEASE_MS, concurrency: 1, backoffMs: 200 };
const core = new Core({ database, model, settings: { ...settings, bundledSkillsDir: null, learning: { ...settings.learning, worker } }, log, handlers: [curator, report, verify] });
await core.startBackground();
// The worker's poll and the schedules do not hold the process open (unref'd): this does, until SIGTERM.
const alive = setInterval(() => undefined, 60_000);
process.stdout.write("ready\n");

process.once("SIGTERM", () => {
  clearInterval(alive);
  void core
    .stopBackground(5_000)
    .then(() => database.close())
    .then(() => process.exit(0));
});
