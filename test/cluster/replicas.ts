/**
 * cairn replicas as real processes, each started as a deployment starts it (`npm start`'s
 * `node --import tsx src/main.ts`, or the build's `node dist/src/main.js`), with Slack in Socket
 * Mode against the fake Slack and the model against the fake Anthropic. Each replica gets an app
 * token of its own (`appTokenFor(label)`), so the fake knows which connection is whose, and a
 * replica is ready once its connection is open.
 *
 * No vitest here: the throughput benchmark starts replicas through this module too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { BOT_TOKEN, appTokenFor, type FakeSlack, type SocketInfo } from "../fakes/slack.ts";
import { waitUntil } from "../fakes/http.ts";

/** How a replica's node is started: `npm start`'s way (TypeScript through tsx), or the build. */
export const FROM_SOURCE = ["--import", "tsx", "src/main.ts"] as const;
export const FROM_BUILD = ["dist/src/main.js"] as const;

export interface ReplicaEnvOptions {
  databaseUrl: string;
  anthropic: { url: string; apiKey: string };
  slack: FakeSlack;
  label: string;
  logLevel?: string;
  /** More settings (the lease and stop settings, concurrency): added last, so they win. */
  extra?: Record<string, string>;
}

/**
 * The environment of one replica: nothing of the test's own environment but PATH and HOME (so a
 * developer's settings never leak in), the fakes, and what keeps the load's replies plain: no
 * background reviews (their model calls and notices are not the posts under test) and no rate limit.
 */
/** This test run's: journal folders of an earlier run are never read. */
const RUN = randomUUID().slice(0, 8);

export function replicaEnv(o: ReplicaEnvOptions): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    DATABASE_URL: o.databaseUrl,
    ANTHROPIC_API_KEY: o.anthropic.apiKey,
    ANTHROPIC_BASE_URL: o.anthropic.url,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_APP_TOKEN: appTokenFor(o.label),
    SLACK_API_URL: o.slack.apiUrl,
    // A replica's own journal folder: the same label (a restart) finds what it kept before.
    CAIRN_JOURNAL_DIR: join(tmpdir(), `cairn-journal-${RUN}-${o.label}`),
    LOG_LEVEL: o.logLevel ?? "warn",
    CAIRN_REVIEW_EVERY_TURNS: "0",
    CAIRN_SKILL_REVIEW_TOOL_CALLS: "0",
    CAIRN_RATE_LIMIT_PER_HOUR: "0",
    CAIRN_TIMEZONE: "UTC",
    ...o.extra,
  };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Milliseconds since the epoch. */
  at: number;
}

export interface Replica {
  label: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<Exit>;
  /** Its open Socket Mode connection (the latest, should it have reconnected). */
  socket(): SocketInfo | undefined;
  /** The last 32 KB it wrote to stdout and stderr (its logs), for failure messages. */
  output(): string;
  /** Its warnings and errors, by message: how many, and the first one's line. */
  problems(): Map<string, { count: number; first: string }>;
  running(): boolean;
}

const OUTPUT_KEPT = 32 * 1024;

/** A pino line: its level (40 warn, 50 error, 60 fatal) and message. */
const LogLineSchema = z.looseObject({ level: z.number(), msg: z.string().default("") });

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/** Each replica's warnings and errors: the first line of each kind, for a failure message. */
export function problemLines(replicas: readonly Replica[]): string {
  return replicas.flatMap((r) => [...r.problems()].map(([, p]) => `${r.label} (${p.count}x): ${p.first}`)).join("\n");
}

/** One line per replica: its warnings and errors by message, with counts. */
export function problemSummary(replicas: readonly Replica[]): string {
  return replicas
    .map((r) => {
      const entries = [...r.problems()].sort((a, b) => b[1].count - a[1].count);
      return `${r.label}: ${entries.length ? entries.map(([msg, p]) => `${p.count}x "${msg}"`).join(", ") : "no warnings"}`;
    })
    .join("; ");
}

/** Starts a replica and resolves once its Socket Mode connection is open (or its readyUrl answers); rejects if it exits first. */
export async function startReplica(
  slack: FakeSlack,
  o: {
    label: string;
    argv: readonly string[];
    cwd: string;
    env: Record<string, string>;
    timeoutMs?: number;
    /** Slack in HTTP mode: ready once this URL (its /readyz) answers 200, not once a Socket Mode connection opens. */
    readyUrl?: string;
  },
): Promise<Replica> {
  const child = spawn(process.execPath, [...o.argv], { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let partial = "";
  const problems = new Map<string, { count: number; first: string }>();
  const keep = (d: Buffer): void => {
    const text = d.toString("utf8");
    output = (output + text).slice(-OUTPUT_KEPT);
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const parsed = LogLineSchema.safeParse(parseJson(line));
      // Anything not a log line (a crash's stack) counts as a problem too.
      const msg = parsed.success ? (parsed.data.level >= 40 ? parsed.data.msg : null) : line.trim() ? `(not a log line) ${line.slice(0, 120)}` : null;
      if (msg === null) continue;
      const seen = problems.get(msg);
      if (seen) seen.count += 1;
      else problems.set(msg, { count: 1, first: line.slice(0, 600) });
    }
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  let exit: Exit | null = null;
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal, at: Date.now() };
      resolve(exit);
    }),
  );
  const socket = (): SocketInfo | undefined => slack.sockets().findLast((s) => s.label === o.label && s.closedAt === null);
  const replica: Replica = {
    label: o.label,
    pid: child.pid ?? -1,
    child,
    exited,
    socket,
    output: () => output,
    problems: () => problems,
    running: () => exit === null,
  };
  let answering = false;
  const poll = o.readyUrl
    ? setInterval(() => {
        fetch(o.readyUrl!, { signal: AbortSignal.timeout(1_000) }).then(
          (res) => void (answering ||= res.status === 200),
          () => undefined,
        );
      }, 100)
    : null;
  const up = () => (o.readyUrl ? answering : socket() !== undefined);
  const ready = await waitUntil(`replica ${o.label} connected or exited`, () => (exit ? "exited" : up() ? "connected" : null), o.timeoutMs ?? 60_000).catch(
    (err: unknown) => String(err),
  );
  if (poll) clearInterval(poll);
  if (ready !== "connected") {
    if (replica.running()) child.kill("SIGKILL");
    const why = ready === "exited" ? `exited (${exit!.code ?? exit!.signal}) before connecting` : ready;
    throw new Error(`replica ${o.label} ${why}; its output:\n${output.slice(-4000)}`);
  }
  return replica;
}

/** Kills whatever is still running (SIGKILL) and waits for every exit. */
export async function killAll(replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) if (r.running()) r.child.kill("SIGKILL");
  await Promise.all(replicas.map((r) => r.exited));
}
