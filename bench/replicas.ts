/**
 * The throughput benchmark's replica rows: one and two cairn processes (the compiled build, `node
 * dist/src/main.js`, as `npm run start:built`) on one PostgreSQL database, Slack in Socket Mode
 * against the fake Slack (events spread round-robin over the connections; a thread post is an
 * `app_mention` and a `message`, as Slack sends it), the model a fake that answers in MODEL_MS.
 *
 * Closed loop, as people wait for an answer before they write again: CONVERSATIONS conversations
 * (threads and DMs) each send POSTS_EACH posts, the next once the previous is answered. Posts per
 * second answered over the run, and each post's reply latency (post sent -> reply reached Slack).
 * Runs alternate one and two replicas (RUNS each), so both see the same machine; the table gives
 * the medians over the runs, and two replicas over one. The fakes and the load run in this
 * process, beside the replicas, on the same cores: on a 2-core machine, two replicas share them
 * with each other and with it, which bounds what a second replica can add.
 *
 * PostgreSQL only: DATABASE_URL when it is one, else CAIRN_BENCH_POSTGRES_URL, else the local
 * server; skipped (with the reason) when none answers.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openDatabase, providerOf } from "../src/db/client.ts";
import { PROJECT_ROOT } from "../src/ground/paths.ts";
import { echoToken, startFakeAnthropic } from "../test/fakes/anthropic.ts";
import { socketSpread, startFakeSlack, type FakeSlack } from "../test/fakes/slack.ts";
import { analyse, answerTo, planLoad, sendClosedLoop, sender, TOKEN } from "../test/cluster/load.ts";
import { FROM_BUILD, killAll, replicaEnv, startReplica, type Replica } from "../test/cluster/replicas.ts";
import { postgresProblem, redact, tempPostgres } from "./lib/db.ts";
import { median, percentile, round, table } from "./lib/report.ts";

const MODEL_MS = 50;
const CONVERSATIONS = 40;
const POSTS_EACH = 5;
const RUNS = 3;

export interface ReplicaRun {
  replicas: number;
  posts: number;
  seconds: number;
  postsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  duplicates: number;
  lost: number;
  /** CPU seconds the replicas used during the measured load (Linux /proc; null elsewhere). */
  replicaCpuSeconds: number | null;
  /** CPU seconds this process (the fakes and the load) used meanwhile. */
  driverCpuSeconds: number;
}

const SELF = fileURLToPath(import.meta.url);

export interface ReplicaRows {
  table: string;
  result: object;
}

export function adminUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url && providerOf(url) === "postgresql") return url;
  return process.env.CAIRN_BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
}

/** CPU seconds a process has used so far (user + system), from /proc; null where there is none. */
export function cpuSeconds(pid: number): number | null {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

const replicasCpu = (replicas: readonly Replica[]): number | null => {
  const each = replicas.map((r) => cpuSeconds(r.pid));
  return each.some((c) => c === null) ? null : each.reduce<number>((a, c) => a + c!, 0);
};

async function runOnce(admin: string, replicas: number): Promise<ReplicaRun> {
  const db = await tempPostgres(admin, `rep${replicas}`);
  const anthropic = await startFakeAnthropic();
  let slack: FakeSlack | null = null;
  const started: Replica[] = [];
  try {
    // Migrated once, here, so the replicas start on a ready schema as a deployment's do.
    await (await openDatabase(db.url)).close();
    anthropic.setDefault(echoToken(TOKEN, answerTo, MODEL_MS));
    const fake = (slack = await startFakeSlack());
    await Promise.all(
      Array.from({ length: replicas }, async (_, i) => {
        const label = `r${i + 1}`;
        const env = replicaEnv({ databaseUrl: db.url, anthropic, slack: fake, label });
        started.push(await startReplica(fake, { label, argv: FROM_BUILD, cwd: PROJECT_ROOT, env }));
      }),
    );
    const spread = socketSpread("round-robin");
    // Warm-up, not measured: each replica's first turns load code and fill its caches.
    const warm = planLoad(fake, { team: fake.bot.teamId, conversations: 4 * replicas, postsEach: 2, dmShare: 0.5, channels: 2, seed: 7, tag: "W", firstToken: 9000 });
    await sendClosedLoop(fake, warm, sender(fake, warm, { spread, duplicateShare: 0, seed: 7 }));

    const plan = planLoad(fake, { team: fake.bot.teamId, conversations: CONVERSATIONS, postsEach: POSTS_EACH, dmShare: 0.5, channels: 5, seed: 1 });
    const cpu0 = replicasCpu(started);
    const driver0 = process.cpuUsage();
    const t0 = performance.now();
    await sendClosedLoop(fake, plan, sender(fake, plan, { spread, duplicateShare: 0, seed: 1 }));
    const seconds = (performance.now() - t0) / 1000;
    const driver = process.cpuUsage(driver0);
    const cpu1 = replicasCpu(started);
    // A moment for a late duplicate to show before counting.
    await new Promise((r) => setTimeout(r, 500));
    const o = analyse(fake, plan);
    return {
      replicas,
      posts: o.posts,
      seconds: round(seconds, 2),
      postsPerSecond: round(o.posts / seconds, 1),
      p50Ms: round(percentile(o.latencies, 50), 0),
      p95Ms: round(percentile(o.latencies, 95), 0),
      duplicates: o.duplicates.length,
      lost: o.lost.length,
      replicaCpuSeconds: cpu0 === null || cpu1 === null ? null : round(cpu1 - cpu0, 2),
      driverCpuSeconds: round((driver.user + driver.system) / 1e6, 2),
    };
  } finally {
    await killAll(started);
    await slack?.close();
    await anthropic.close();
    await db.drop();
  }
}

/** The replica rows, or why they were skipped. */
export async function replicaRows(): Promise<ReplicaRows | { skipped: string }> {
  const admin = adminUrl();
  const problem = await postgresProblem(admin);
  if (problem) return { skipped: `replica rows need PostgreSQL; ${redact(admin)} did not answer (${problem}). Set DATABASE_URL or CAIRN_BENCH_POSTGRES_URL.` };
  if (!existsSync(join(PROJECT_ROOT, ...FROM_BUILD))) return { skipped: `replica rows need the build (${FROM_BUILD.join("/")}): run npm run build, or npm run bench` };
  const runs: ReplicaRun[] = [];
  // Alternated, so a change in the machine's load falls on both.
  for (let i = 0; i < RUNS; i++) for (const n of [1, 2]) runs.push(await runOnce(admin, n));
  const of = (n: number) => runs.filter((r) => r.replicas === n);
  const med = (n: number, key: "postsPerSecond" | "p50Ms" | "p95Ms") => median(of(n).map((r) => r[key]));
  const summary = [1, 2].map((n) => ({
    replicas: n,
    postsPerSecond: med(n, "postsPerSecond"),
    p50Ms: med(n, "p50Ms"),
    p95Ms: med(n, "p95Ms"),
    duplicates: of(n).reduce((a, r) => a + r.duplicates, 0),
    lost: of(n).reduce((a, r) => a + r.lost, 0),
  }));
  const ratio = {
    postsPerSecond: round(summary[1]!.postsPerSecond / summary[0]!.postsPerSecond, 2),
    p50Ms: round(summary[1]!.p50Ms / summary[0]!.p50Ms, 2),
    p95Ms: round(summary[1]!.p95Ms / summary[0]!.p95Ms, 2),
  };
  const perRun = (n: number) => of(n).map((r) => r.postsPerSecond).join(", ");
  const text = [
    `replicas on PostgreSQL: Socket Mode, fake model ${MODEL_MS} ms, ${CONVERSATIONS} conversations x ${POSTS_EACH} posts in a closed loop; medians of ${RUNS} runs each, alternated`,
    table(
      ["replicas", "posts", "posts/s", "p50 ms", "p95 ms", "duplicates", "lost", "posts/s per run"],
      [
        ...summary.map((s) => [String(s.replicas), CONVERSATIONS * POSTS_EACH, s.postsPerSecond, s.p50Ms, s.p95Ms, s.duplicates, s.lost, perRun(s.replicas)]),
        ["two / one", "", ratio.postsPerSecond, ratio.p50Ms, ratio.p95Ms, "", "", ""],
      ],
    ),
    `CPU seconds in the measured load, replicas / this process (fakes and load), per run: ${runs.map((r) => `${r.replicas}: ${r.replicaCpuSeconds ?? "?"} / ${r.driverCpuSeconds}`).join("; ")}`,
  ].join("\n");
  return { table: text, result: { database: "postgresql", modelMs: MODEL_MS, conversations: CONVERSATIONS, postsEach: POSTS_EACH, summary, ratio, runs } };
}

// Run on its own (`node dist/bench/replicas.js`): the replica rows without the in-process ones.
if (process.argv[1] === SELF) {
  const rows = await replicaRows();
  process.stdout.write(`${"skipped" in rows ? `skipped: ${rows.skipped}` : rows.table}\n`);
}
