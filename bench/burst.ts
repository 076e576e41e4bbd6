/**
 * The throughput benchmark's burst rows: MENTIONS Slack mentions sent in SECONDS seconds (one every
 * INTERVAL_MS) to ONE cairn process (the compiled build, `node dist/src/main.js`), Slack in HTTP
 * mode: every mention is a signed Events API POST, and the HTTP response is Slack's
 * acknowledgement, which Slack wants within 3 s (else it sends the event again). The fake model
 * answers in MODEL_MS. Open loop: the mentions go out on a fixed schedule, whatever the answers.
 *
 * Per database (SQLite on a temp file, then PostgreSQL on a temp database; skipped with the reason
 * when no PostgreSQL answers), one process each with its own journal folder: acknowledgement
 * latency (POST sent -> its HTTP response), acknowledgements later than 3 s, non-200 answers,
 * reply latency (POST sent -> the bot's answer reached the fake Slack, matched by the post's
 * token), replies lost or doubled, and the process's peak RSS (VmHWM, read just before it is
 * stopped; null where there is no /proc). The fakes and the load run in this process, on the same
 * cores as cairn.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openDatabase } from "../src/db/client.ts";
import { PROJECT_ROOT } from "../src/ground/paths.ts";
import { echoToken, startFakeAnthropic, type FakeAnthropic } from "../test/fakes/anthropic.ts";
import { eventCallback, postSigned, SIGNING_SECRET, startFakeSlack, type FakeSlack } from "../test/fakes/slack.ts";
import { freePort, waitUntil } from "../test/fakes/http.ts";
import { answerTo, TOKEN } from "../test/cluster/load.ts";
import { FROM_BUILD, killAll, problemSummary, replicaEnv, startReplica, type Replica } from "../test/cluster/replicas.ts";
import { postgresProblem, redact, tempPostgres } from "./lib/db.ts";
import { adminUrl, cpuSeconds } from "./replicas.ts";
import { percentile, round, table } from "./lib/report.ts";

const MENTIONS = 500;
const SECONDS = 10;
const INTERVAL_MS = (SECONDS * 1000) / MENTIONS;
const CHANNELS = 100;
const PEOPLE = 50;
const MODEL_MS = 200;
const WARM_MENTIONS = 6;
/** Slack's deadline for the acknowledgement. */
const SLACK_DEADLINE_MS = 3_000;
/** A POST not answered in this long counts as failed (status 0). */
const POST_TIMEOUT_MS = 30_000;

const SELF = fileURLToPath(import.meta.url);

export interface BurstRun {
  database: "sqlite" | "postgresql";
  mentions: number;
  /** From the first POST sent to the last (the schedule's fidelity: SECONDS when kept). */
  sentOverSeconds: number;
  ackP50Ms: number;
  ackP95Ms: number;
  ackMaxMs: number;
  acksOver3s: number;
  /** Answers other than 200, with status 0 for a failed or timed-out request. */
  non200: number;
  non200Statuses: Record<string, number>;
  replyP50Ms: number;
  replyP95Ms: number;
  /** Mentions answered at least once. */
  answered: number;
  lost: number;
  duplicated: number;
  /** From the first POST to the last reply. */
  lastReplyAfterSeconds: number;
  /** CPU seconds cairn used from the first POST to the last reply (null without /proc), and this process (the fakes and the load). */
  cairnCpuSeconds: number | null;
  driverCpuSeconds: number;
  /** The machine's 1-minute load average when the burst started (other work on it slows everything). */
  loadAverage: number;
  /** VmHWM of the cairn process, in MB; null without /proc. */
  rssPeakMb: number | null;
  /** The process's warnings and errors, by message. */
  problems: string;
}

interface Mention {
  token: string;
  channel: string;
  user: string;
  text: string;
  ts: string;
  /** Date.now() when its POST was sent (the fake Slack stamps bot posts with Date.now()). */
  sentAt: number;
  /** performance.now() at the POST's start and its response. */
  postStart: number;
  postEnd: number;
  status: number;
}

/** Peak resident set (VmHWM) of a process in MB, from /proc; null where there is none. */
function peakRssMb(pid: number): number | null {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? null : round(Number(kb) / 1024, 0);
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function mentionsOf(slack: FakeSlack, count: number, o: { tag: string; channels: number; firstToken: number }): Mention[] {
  return Array.from({ length: count }, (_, i) => {
    // Round-robin over the channels (each channel's posts 2 s apart), the people spread over them.
    const c = i % o.channels;
    const k = Math.floor(i / o.channels);
    const token = `p${String(o.firstToken + i).padStart(4, "0")}`;
    return {
      token,
      channel: `C${o.tag}${String(c).padStart(3, "0")}`,
      user: `U${o.tag}P${String((c + 13 * k) % PEOPLE).padStart(2, "0")}`,
      text: `<@${slack.bot.userId}> ${token} could you sum up where we are on item ${k + 1} of channel ${c}?`,
      ts: "",
      sentAt: 0,
      postStart: 0,
      postEnd: 0,
      status: 0,
    };
  });
}

/** Stores the mention in the fake (what a channel's history shows) and POSTs its app_mention, signed. */
async function send(slack: FakeSlack, url: string, m: Mention): Promise<void> {
  m.ts = slack.seedMessage({ channel: m.channel, user: m.user, text: m.text });
  const event = { type: "app_mention", channel: m.channel, channel_type: "channel", user: m.user, text: m.text, ts: m.ts, event_ts: m.ts };
  m.sentAt = Date.now();
  m.postStart = performance.now();
  m.status = await Promise.race([
    postSigned(url, eventCallback(slack.bot.teamId, event)).then((r) => r.status, () => 0),
    sleep(POST_TIMEOUT_MS).then(() => 0),
  ]);
  m.postEnd = performance.now();
}

/** The bot's posts by the token they answer. */
function repliesByToken(slack: FakeSlack): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const p of slack.botPosts()) {
    if (p.deleted || !p.text.startsWith("answer to")) continue;
    const token = TOKEN.exec(p.text)?.[0];
    if (token) out.set(token, [...(out.get(token) ?? []), p.at]);
  }
  return out;
}

/** Waits until every mention is answered, or none was answered for `quietMs`, or `timeoutMs`. */
async function settle(slack: FakeSlack, mentions: readonly Mention[], quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = -1;
  let since = Date.now();
  for (;;) {
    const replies = repliesByToken(slack);
    const answered = mentions.filter((m) => replies.has(m.token)).length;
    if (answered === mentions.length || Date.now() > deadline) return;
    if (answered !== seen) [seen, since] = [answered, Date.now()];
    else if (Date.now() - since > quietMs) return;
    await sleep(100);
  }
}

async function runOnce(database: BurstRun["database"], databaseUrl: string): Promise<BurstRun> {
  const journal = mkdtempSync(join(tmpdir(), `cairn-burst-journal-${database}-`));
  let anthropic: FakeAnthropic | null = null;
  let slack: FakeSlack | null = null;
  const started: Replica[] = [];
  try {
    // Migrated once, here, so the process starts on a ready schema as a deployment's does.
    await (await openDatabase(databaseUrl)).close();
    anthropic = await startFakeAnthropic();
    anthropic.setDefault(echoToken(TOKEN, answerTo, MODEL_MS));
    const fake = (slack = await startFakeSlack());
    for (let i = 0; i < PEOPLE; i++) {
      const id = `UBP${String(i).padStart(2, "0")}`;
      fake.addUser({ id, name: `person${i}`, displayName: `Person ${i}`, realName: `Person Number ${i}` });
    }
    fake.addUser({ id: "UWP00", name: "warmup", displayName: "Warm", realName: "Warm Up" });
    const port = await freePort();
    const label = `burst-${database}`;
    const env = replicaEnv({ databaseUrl, anthropic, slack: fake, label, extra: { CAIRN_JOURNAL_DIR: journal } });
    delete env.SLACK_APP_TOKEN;
    Object.assign(env, { SLACK_SIGNING_SECRET: SIGNING_SECRET, PORT: String(port) });
    const replica = await startReplica(fake, { label, argv: FROM_BUILD, cwd: PROJECT_ROOT, env, readyUrl: `http://127.0.0.1:${port}/readyz` });
    started.push(replica);
    const url = `http://127.0.0.1:${port}/slack/events`;

    // Warm-up, not measured: the first turns load code, compile patterns and fill caches.
    const warm = mentionsOf(fake, WARM_MENTIONS, { tag: "BW", channels: 3, firstToken: 9000 }).map((m) => ({ ...m, user: "UWP00" }));
    for (const m of warm) {
      await send(fake, url, m);
      await waitUntil(`warm-up mention ${m.token} answered`, () => repliesByToken(fake).has(m.token), 30_000);
    }

    const mentions = mentionsOf(fake, MENTIONS, { tag: "B", channels: CHANNELS, firstToken: 0 });
    const loadAverage = round(loadavg()[0]!, 2);
    const cpu0 = cpuSeconds(replica.pid);
    const driver0 = process.cpuUsage();
    const t0 = performance.now();
    const sending: Promise<void>[] = [];
    for (const [i, m] of mentions.entries()) {
      const wait = t0 + i * INTERVAL_MS - performance.now();
      if (wait > 0) await sleep(wait);
      // Not awaited: Slack sends the next event while this one waits for its acknowledgement.
      sending.push(send(fake, url, m));
    }
    const sentOver = (mentions.at(-1)!.postStart - mentions[0]!.postStart) / 1000;
    await Promise.all(sending);
    await settle(fake, mentions, 15_000, 180_000);
    const cpu1 = cpuSeconds(replica.pid);
    const driver = process.cpuUsage(driver0);
    // A moment for a late duplicate to show before counting.
    await sleep(1_000);
    const rssPeakMb = peakRssMb(replica.pid);
    const problems = problemSummary(started);

    const acks = mentions.map((m) => m.postEnd - m.postStart);
    const statuses: Record<string, number> = {};
    for (const m of mentions) if (m.status !== 200) statuses[String(m.status)] = (statuses[String(m.status)] ?? 0) + 1;
    const replies = repliesByToken(fake);
    const answered = mentions.filter((m) => replies.has(m.token));
    const latencies = answered.map((m) => Math.min(...replies.get(m.token)!) - m.sentAt);
    const lastReply = Math.max(0, ...answered.map((m) => Math.max(...replies.get(m.token)!)));
    const firstSent = mentions[0]!.sentAt;
    return {
      database,
      mentions: MENTIONS,
      sentOverSeconds: round(sentOver, 2),
      ackP50Ms: round(percentile(acks, 50), 0),
      ackP95Ms: round(percentile(acks, 95), 0),
      ackMaxMs: round(Math.max(...acks), 0),
      acksOver3s: acks.filter((a) => a > SLACK_DEADLINE_MS).length,
      non200: mentions.filter((m) => m.status !== 200).length,
      non200Statuses: statuses,
      replyP50Ms: round(percentile(latencies, 50), 0),
      replyP95Ms: round(percentile(latencies, 95), 0),
      answered: answered.length,
      lost: MENTIONS - answered.length,
      duplicated: answered.filter((m) => replies.get(m.token)!.length > 1).length,
      lastReplyAfterSeconds: round((lastReply - firstSent) / 1000, 1),
      cairnCpuSeconds: cpu0 === null || cpu1 === null ? null : round(cpu1 - cpu0, 2),
      driverCpuSeconds: round((driver.user + driver.system) / 1e6, 2),
      loadAverage,
      rssPeakMb,
      problems,
    };
  } finally {
    await killAll(started);
    await slack?.close();
    await anthropic?.close();
    rmSync(journal, { recursive: true, force: true });
  }
}

async function onSqlite(): Promise<BurstRun> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-burst-sqlite-"));
  try {
    return await runOnce("sqlite", `file:${join(dir, "burst.db")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(admin: string): Promise<BurstRun> {
  const db = await tempPostgres(admin, "burst");
  try {
    return await runOnce("postgresql", db.url);
  } finally {
    await db.drop();
  }
}

/** The burst rows: SQLite, then PostgreSQL (skipped, with the reason, when none answers). */
export async function burstRows(): Promise<{ table: string; result: object }> {
  const heading = `burst: ${MENTIONS} mentions in ${SECONDS} s to one process, Slack HTTP mode, model ${MODEL_MS} ms`;
  if (!existsSync(join(PROJECT_ROOT, ...FROM_BUILD))) {
    const skipped = `burst rows need the build (${FROM_BUILD.join("/")}): run npm run build, or npm run bench`;
    return { table: `${heading}\nskipped: ${skipped}`, result: { skipped } };
  }
  const runs: BurstRun[] = [await onSqlite()];
  const admin = adminUrl();
  const problem = await postgresProblem(admin);
  const pgSkipped = problem ? `PostgreSQL row skipped: ${redact(admin)} did not answer (${problem}). Set DATABASE_URL or CAIRN_BENCH_POSTGRES_URL.` : null;
  if (!pgSkipped) runs.push(await onPostgres(admin));
  const text = [
    `${heading} (${CHANNELS} channels x ${MENTIONS / CHANNELS} mentions, ${PEOPLE} people, one POST every ${INTERVAL_MS} ms, open loop; acks from POST sent to its response, Slack wants them within 3 s)`,
    table(
      ["database", "mentions", "sent over s", "ack p50 ms", "ack p95 ms", "ack max ms", "acks > 3 s", "non-200", "reply p50 ms", "reply p95 ms", "lost", "duplicated", "RSS peak MB"],
      runs.map((r) => [r.database, r.mentions, r.sentOverSeconds, r.ackP50Ms, r.ackP95Ms, r.ackMaxMs, r.acksOver3s, r.non200, r.replyP50Ms, r.replyP95Ms, r.lost, r.duplicated, r.rssPeakMb ?? "n/a"]),
    ),
    ...(pgSkipped ? [pgSkipped] : []),
    `CPU seconds from the first POST to the last reply, cairn / this process (fakes and load): ${runs.map((r) => `${r.database} ${r.cairnCpuSeconds ?? "?"} / ${r.driverCpuSeconds}`).join("; ")}; last reply ${runs.map((r) => `${r.database} ${r.lastReplyAfterSeconds} s`).join(", ")} after the first POST; machine load (1-min average) at the start: ${runs.map((r) => `${r.database} ${r.loadAverage}`).join(", ")} on ${availableParallelism()} cores`,
    `warnings and errors of the process: ${runs.map((r) => `${r.database}: ${r.problems.replace(/^burst-\w+: /, "")}`).join("; ")}`,
  ].join("\n");
  return {
    table: text,
    result: { mentions: MENTIONS, seconds: SECONDS, channels: CHANNELS, people: PEOPLE, modelMs: MODEL_MS, runs, ...(pgSkipped ? { postgresqlSkipped: pgSkipped } : {}) },
  };
}

// Run on its own (`node dist/bench/burst.js`): the burst rows without the others.
if (process.argv[1] === SELF) {
  const rows = await burstRows();
  process.stdout.write(`${rows.table}\n${JSON.stringify(rows.result)}\n`);
}
