/**
 * Throughput and ordering: 200 conversations at once against a fake model that takes 1 s per call.
 * Each conversation sends its messages all at once; every reply must come back in the order its
 * messages were sent (asserted: a wrong order fails the benchmark). Replies per second over the
 * whole run and the process's peak RSS (sampled every 20 ms).
 *
 * Runs, each a process of its own (so its RSS peak is its own, not what the benchmarks before it
 * left in the heap): at 256 conversations answered at once, with 200 new conversations (each
 * person, channel and session created inside the burst) and with 200 that talked before (one
 * exchange each before the clock starts: a team's usual day); the new ones again through the
 * delivery path Slack and Discord messages take (each reply posted and recorded); again with V8's
 * --optimize-for-size; and at CAIRN_MAX_CONCURRENCY's default, which caps throughput at
 * concurrency / model time. Then the replica rows (replicas.ts): one and two cairn processes on
 * PostgreSQL, Slack in Socket Mode, measured in the same run.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openBenchDatabase } from "./lib/db.ts";
import { benchCore, benchSettings, channelMessage } from "./lib/core.ts";
import { fakeModel, lastUserText } from "./lib/model.ts";
import { now, round, table } from "./lib/report.ts";
import type { BenchOutcome } from "./run.ts";
import { replicaRows } from "./replicas.ts";
import { burstRows } from "./burst.ts";
import { MemoryPlatform } from "./lib/memory-platform.ts";
import type { Core } from "../src/app/core.ts";

const CONVERSATIONS = 200;
/** The goal (issue 29): replies/s with 200 new conversations, on both databases, and the peak RSS. */
const GOAL = { repliesPerSecond: 190, rssMb: 200 };
const MODEL_MS = 1000;

/**
 * How messages come in: `Core.handle` (the console's way, the reply handed back), or the delivery
 * path Slack and Discord messages take (`Core.receive` through the in-memory platform: under a
 * lease, each reply posted and recorded, what it triggers read), one DM per conversation.
 */
type Path = "handle" | "delivery";

interface RunStats {
  maxConcurrency: number;
  /** Conversations that had already talked (one exchange each, before the clock started). */
  warm: boolean;
  path: Path;
  conversations: number;
  messagesEach: number;
  replies: number;
  seconds: number;
  repliesPerSecond: number;
  orderKept: boolean;
  rssPeakMb: number;
  /**
   * When each round's last model call began (ms from the start; round k is every conversation's
   * message k): the run lasts about the last of these plus the model's second. Round 0 ends when
   * the burst's turns are all prepared; each later round's lag behind k seconds is what the turns'
   * ends and the next turns' starts added.
   */
  lastCallMs: number[];
}

async function runOnce(maxConcurrency: number, messagesEach: number, warm: boolean, path: Path = "handle"): Promise<RunStats> {
  const bench = await openBenchDatabase(`tp${maxConcurrency}`);
  try {
    const timing = { delayMs: warm ? 0 : MODEL_MS };
    const fake = fakeModel((req) => ({ text: `re: ${/msg (\d+)/.exec(lastUserText(req))?.[1] ?? "?"}` }), timing);
    let t0 = 0;
    const lastCallMs: number[] = [];
    const model: typeof fake = {
      ...fake,
      create: (params, opts) => {
        const k = Number(/msg (\d+)/.exec(lastUserText(params))?.[1]);
        if (t0 && Number.isInteger(k)) lastCallMs[k] = round(now() - t0, 0);
        return fake.create(params, opts);
      },
    };
    const core = await benchCore(bench.database, model, { maxConcurrency });
    const send = path === "delivery" ? delivered(core) : handled(core);
    if (warm) {
      // Every person, conversation and session exists and has one exchange: what a team's usual day looks like.
      await Promise.all(Array.from({ length: CONVERSATIONS }, (_, c) => send(c, "hello")));
      timing.delayMs = MODEL_MS;
    }
    let rssPeak = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    t0 = now();
    const conversations = Array.from({ length: CONVERSATIONS }, async (_, c) => {
      const done: string[] = [];
      // All of a conversation's messages arrive together; the Core must answer them in order.
      await Promise.all(
        Array.from({ length: messagesEach }, async (_, k) => {
          done.push(await send(c, `msg ${k}`));
        }),
      );
      return done;
    });
    const results = await Promise.all(conversations);
    const seconds = (now() - t0) / 1000;
    clearInterval(sampler);
    const expected = Array.from({ length: messagesEach }, (_, k) => `re: ${k}`);
    const orderKept = results.every((r) => r.join("|") === expected.join("|"));
    if (!orderKept) {
      const bad = results.findIndex((r) => r.join("|") !== expected.join("|"));
      throw new Error(`conversation ${bad} replies out of order: ${results[bad]!.join(", ")}`);
    }
    const replies = CONVERSATIONS * messagesEach;
    return { maxConcurrency, warm, path, conversations: CONVERSATIONS, messagesEach, replies, seconds: round(seconds, 2), repliesPerSecond: round(replies / seconds, 1), orderKept, rssPeakMb: round(rssPeak / 2 ** 20, 0), lastCallMs };
  } finally {
    await bench.close();
  }
}

/** Conversation `c` says `text`; the reply's text, once answered. */
type Send = (c: number, text: string) => Promise<string>;

function handled(core: Core): Send {
  return async (c, text) => {
    const r = await core.handle(channelMessage("tp-ws", `U${c}`, `C${c}`, text, `tp-${c}-${text}`));
    if (r.kind !== "reply") throw new Error(`conversation ${c} "${text}" dropped: ${r.reason}`);
    return r.reply.text;
  };
}

function delivered(core: Core): Send {
  const chat = new MemoryPlatform("tp-ws");
  const started = chat.start(core.attach(chat));
  return async (c, text) => {
    await started;
    const said = await chat.say(`U${c}`, "dm", text);
    if (said.received.kind !== "replied") throw new Error(`conversation ${c} "${text}" not answered: ${said.received.kind}`);
    return said.replies.map((r) => r.text).join("");
  };
}

/** Runs `runOnce` in a child process (this file, run directly) and reads its stats from stdout. */
function inChild(maxConcurrency: number, messagesEach: number, warm: boolean, nodeFlags: string[] = [], path: Path = "handle"): Promise<RunStats & { nodeFlags: string }> {
  return new Promise((resolve, reject) => {
    const args = [...process.execArgv, ...nodeFlags, SELF, String(maxConcurrency), String(messagesEach), warm ? "warm" : "cold", path];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0 || !last.startsWith("{")) return reject(new Error(`throughput run exited with ${code}: ${out.slice(-500)}`));
      resolve({ ...(JSON.parse(last) as RunStats), nodeFlags: nodeFlags.join(" ") || "(none)" });
    });
  });
}

const SELF = fileURLToPath(import.meta.url);

export async function run(): Promise<BenchOutcome> {
  const defaults = benchSettings();
  const wide = await inChild(256, 3, false);
  const warm = await inChild(256, 3, true);
  // As Slack and Discord messages come in: the goal is theirs as much as the console's.
  const viaDelivery = await inChild(256, 3, false, [], "delivery");
  // V8 trading speed for memory (a smaller heap growth factor): what a small machine may prefer.
  const lean = await inChild(256, 3, false, ["--optimize-for-size"]);
  const atDefault = await inChild(defaults.maxConcurrency, 1, false);
  const row = (s: RunStats & { nodeFlags: string }): (string | number)[] => [
    `${s.warm ? "talked before" : "new"}${s.path === "delivery" ? ", delivery path" : ""}`,
    String(s.maxConcurrency),
    s.nodeFlags,
    s.replies,
    s.seconds,
    s.repliesPerSecond,
    s.orderKept ? "yes" : "NO",
    s.rssPeakMb,
    s.lastCallMs.join(" / "),
  ];
  const text = [
    `throughput: ${CONVERSATIONS} conversations at once, fake model ${MODEL_MS} ms per call (goal >= ${GOAL.repliesPerSecond} replies/s, RSS <= ${GOAL.rssMb} MB)`,
    table(["conversations", "max concurrency", "node flags", "replies", "seconds", "replies/s", "order kept", "RSS peak MB", "each round's last model call (ms)"], [row(wide), row(warm), row(viaDelivery), row(lean), row(atDefault)]),
    `ceiling = concurrency / model time: ${defaults.maxConcurrency} at the default CAIRN_MAX_CONCURRENCY=${defaults.maxConcurrency}`,
  ].join("\n");
  const replicas = await replicaRows();
  const burst = await burstRows();
  return {
    name: "throughput",
    table: `${text}\n\n${"skipped" in replicas ? `replica rows skipped: ${replicas.skipped}` : replicas.table}\n\n${burst.table}`,
    result: { database: (await import("./lib/db.ts")).benchProvider(), goal: GOAL, runs: [wide, warm, viaDelivery, lean, atDefault], replicas: "skipped" in replicas ? { skipped: replicas.skipped } : replicas.result, burst: burst.result },
  };
}

if (process.argv[1] === SELF) {
  const [concurrency, each, warm, path] = process.argv.slice(2);
  const stats = await runOnce(Number(concurrency), Number(each), warm === "warm", path === "delivery" ? "delivery" : "handle");
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}
