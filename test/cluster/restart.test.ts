/**
 * One cairn process restarted as an operator restarts it (`npm run test:cluster`), on SQLite and on
 * PostgreSQL, Slack in Socket Mode against the fake Slack and a slow fake model, so that turns are
 * in flight when the process goes:
 *   a. kill -9 with 20 turns in flight, then a new process: every message answered once, the 👀
 *      taken off each, without anyone repeating anything;
 *   b. `npm start` stopped as a service manager stops it (SIGTERM to the whole process group, so
 *      npm, tsx and node each get it, and npm and tsx relay it again) with 10 turns in flight:
 *      exit 0, every message answered, nothing twice.
 * These are the two ways issue 15 found turns lost: all 20 stored and never answered after a
 * kill -9; 2 of 3 runs of (b) dying within a second with the 10 stored and unanswered.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRoot } from "../../src/ground/paths.ts";
import { echoToken, startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { eventCallback, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { waitUntil } from "../fakes/http.ts";
import { databases as providers, freshPostgres, REQUIRE_POSTGRES } from "../support/db.ts";
import { answerTo, TOKEN } from "./load.ts";
import { FROM_SOURCE, killAll, replicaEnv, startReplica, type Exit, type Replica } from "./replicas.ts";

const ROOT = findRoot(new URL(".", import.meta.url).pathname);
/** Long enough that every turn is still waiting on the model when the process is killed or stopped. */
const MODEL_MS = 4_000;

interface Place {
  channel: string;
  user: string;
  token: string;
  ts: string;
}

const databases: { name: string; url: () => Promise<{ url: string; drop: () => Promise<void> }> }[] = [
  {
    name: "SQLite",
    url: async () => {
      const dir = mkdtempSync(join(tmpdir(), "cairn-restart-"));
      return { url: `file:${join(dir, "cairn.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  ...(providers.some((p) => p.name === "postgresql" && p.available) || REQUIRE_POSTGRES ? [{ name: "PostgreSQL", url: freshPostgres }] : []),
];

describe.each(databases)("cairn restarted with turns in flight, on $name", ({ url }) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let db: { url: string; drop: () => Promise<void> };
  const started: Replica[] = [];

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault(echoToken(TOKEN, answerTo, MODEL_MS));
    slack = await startFakeSlack();
    db = await url();
  });
  afterAll(async () => {
    await killAll(started);
    await slack?.close();
    await anthropic?.close();
    await db?.drop();
  });

  /** `n` DMs from `n` people, each a conversation of its own, so all are in flight at once. */
  function sendDms(tag: string, n: number, firstToken: number): Place[] {
    return Array.from({ length: n }, (_, i) => {
      const channel = `D${tag}${String(i).padStart(3, "0")}`;
      const user = `U${tag}${String(i).padStart(3, "0")}`;
      const token = `p${String(firstToken + i).padStart(4, "0")}`;
      const text = `${token} what is the plan?`;
      const ts = slack.seedMessage({ channel, user, text });
      const open = slack.sockets().filter((s) => s.closedAt === null).map((s) => s.id);
      slack.pushEnvelope("events_api", eventCallback(slack.bot.teamId, { type: "message", channel_type: "im", channel, user, text, ts, event_ts: ts }), { to: open.slice(0, 1) });
      return { channel, user, token, ts };
    });
  }

  const repliesTo = (p: Place) => slack.botPosts().filter((b) => b.channel === p.channel && !b.deleted && TOKEN.exec(b.text)?.[0] === p.token);
  const modelCallsFor = (places: Place[]) => {
    const tokens = new Set(places.map((p) => p.token));
    return anthropic.requests.filter((r) => [...JSON.stringify(r.body.messages.at(-1)).matchAll(/p\d{4}/g)].some((m) => tokens.has(m[0]))).length;
  };

  it("a. kill -9 with 20 turns in flight: the next process answers each message once and takes the 👀 off", async () => {
    const env = replicaEnv({ databaseUrl: db.url, anthropic, slack, label: "k1" });
    const first = await startReplica(slack, { label: "k1", argv: FROM_SOURCE, cwd: ROOT, env });
    started.push(first);
    const places = sendDms("KILL", 20, 1000);
    await waitUntil("all 20 turns waiting on the model", () => modelCallsFor(places) >= 20, 30_000);
    expect(places.every((p) => slack.reactionsOn(p.channel, p.ts).includes("eyes"))).toBe(true);
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(places.filter((p) => repliesTo(p).length > 0)).toEqual([]);

    const killedAt = Date.now();
    const second = await startReplica(slack, { label: "k2", argv: FROM_SOURCE, cwd: ROOT, env: { ...env, SLACK_APP_TOKEN: env.SLACK_APP_TOKEN!.replace("k1", "k2") } });
    started.push(second);
    await waitUntil("every message answered", () => places.every((p) => repliesTo(p).length > 0), 90_000);
    const resumedMs = Date.now() - killedAt;
    // A moment more for a second answer, should one come.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(places.map((p) => repliesTo(p).length)).toEqual(places.map(() => 1));
    expect(places.map((p) => repliesTo(p)[0]!.text)).toEqual(places.map((p) => answerTo(p.token)));
    expect(places.filter((p) => slack.reactionsOn(p.channel, p.ts).includes("eyes"))).toEqual([]);
    process.stdout.write(`restart a: 20 in flight at kill -9, 20 answered once after the restart, the last ${resumedMs} ms after the kill (model ${MODEL_MS} ms)\n`);
    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  });

  it("b. npm start stopped by SIGTERM to its process group with 10 turns in flight: exit 0, each answered once", async () => {
    const env = replicaEnv({ databaseUrl: db.url, anthropic, slack, label: "n1" });
    // As a service manager runs it: npm in a process group of its own, which the signal goes to.
    const npm = spawn("npm", ["start", "--silent"], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    npm.stdout!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-16_000)));
    npm.stderr!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-16_000)));
    const exited = new Promise<Exit>((resolve) => npm.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
    try {
      await waitUntil("npm start connected", () => slack.sockets().some((s) => s.label === "n1" && s.closedAt === null), 60_000);
      const places = sendDms("TERM", 10, 2000);
      await waitUntil("all 10 turns waiting on the model", () => modelCallsFor(places) >= 10, 30_000);
      process.kill(-npm.pid!, "SIGTERM");
      const exit = await exited;
      expect(exit, `npm start's exit; its output:\n${output.slice(-4000)}`).toMatchObject({ code: 0, signal: null });
      // Finished before exiting: nothing is left for a next process.
      expect(places.map((p) => repliesTo(p).length)).toEqual(places.map(() => 1));
      expect(places.filter((p) => slack.reactionsOn(p.channel, p.ts).includes("eyes"))).toEqual([]);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) process.kill(-npm.pid!, "SIGKILL");
    }
  });
});
