/**
 * One cairn process (`node --import tsx src/main.ts`, Slack in Socket Mode against the fake Slack)
 * living through a PostgreSQL outage, with the database behind a proxy the test makes refuse or
 * hang (test/support/tcp-proxy.ts), and its inbound journal on local disk (CAIRN_JOURNAL_DIR):
 *   1. messages sent while PostgreSQL refuses connections are acknowledged, told about once per
 *      conversation, kept through a kill -9, and answered once each, in order, by the next process
 *      (same journal folder) once the database is back; each stored once;
 *   2. while PostgreSQL hangs, the envelope is still acknowledged (the journal is enough), and the
 *      message is answered after the database answers again;
 *   3. a journal folder that cannot be written stops start-up with exit code 1 and one sentence.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRoot } from "../../src/ground/paths.ts";
import { echoToken, startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { eventCallback, startFakeSlack, type BotPost, type FakeSlack } from "../fakes/slack.ts";
import { waitUntil } from "../fakes/http.ts";
import { freshPostgres, postgresSuite } from "../support/db.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { answerTo, TOKEN } from "./load.ts";
import { FROM_SOURCE, killAll, problemLines, replicaEnv, startReplica, type Exit, type Replica } from "./replicas.ts";

const ROOT = findRoot(new URL(".", import.meta.url).pathname);
/** A model's latency: short, the outage is what is under test. */
const MODEL_MS = 150;

interface Place {
  channel: string;
  user: string;
  token: string;
  ts: string;
  /** Its place in its conversation's send order. */
  k: number;
  envelope: string;
  sentAt: number;
}

/** The storage notice (STORAGE_DOWN_NOTICE as Slack mrkdwn): the only post of the outage that says "storage". */
const isNotice = (b: BotPost): boolean => /storage/i.test(b.text);
/** What must never be said here: the message was kept, so neither "couldn't save" nor "is saved; try again". */
const isWrongApology = (b: BotPost): boolean => /saved|couldn't save|could not save/i.test(b.text);

postgresSuite()("cairn through a PostgreSQL outage, Socket Mode, journal on disk", () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let pgdb: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;
  const started: Replica[] = [];
  const journalDirs = new Set<string>();
  let replicaCount = 0;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault(echoToken(TOKEN, answerTo, MODEL_MS));
    slack = await startFakeSlack();
    pgdb = await freshPostgres();
    const target = new URL(pgdb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterAll(async () => {
    await killAll(started);
    await proxy?.close();
    await slack?.close();
    await anthropic?.close();
    await pgdb?.drop();
    for (const dir of journalDirs) rmSync(dir, { recursive: true, force: true });
  });

  const envFor = (label: string): Record<string, string> => {
    const env = replicaEnv({ databaseUrl: proxy.through(pgdb.url), anthropic, slack, label });
    journalDirs.add(env.CAIRN_JOURNAL_DIR!);
    return env;
  };
  async function start(label: string): Promise<Replica> {
    replicaCount += 1;
    const replica = await startReplica(slack, { label, argv: FROM_SOURCE, cwd: ROOT, env: envFor(label) });
    started.push(replica);
    return replica;
  }
  const output = (): string => started.map((r) => `--- ${r.label} (pid ${r.pid}):\n${r.output().slice(-3000)}`).join("\n");

  /** One DM, as Slack sends it over the open connection. */
  function sendDm(channel: string, user: string, token: string, k = 0): Place {
    const text = `${token} what is the plan?`;
    const ts = slack.seedMessage({ channel, user, text });
    const open = slack.sockets().filter((s) => s.closedAt === null).map((s) => s.id);
    const envelope = slack.pushEnvelope("events_api", eventCallback(slack.bot.teamId, { type: "message", channel_type: "im", channel, user, text, ts, event_ts: ts }), { to: open.slice(0, 1) });
    return { channel, user, token, ts, k, envelope, sentAt: Date.now() };
  }

  const repliesTo = (p: Place): BotPost[] => slack.botPosts().filter((b) => b.channel === p.channel && !b.deleted && !isNotice(b) && TOKEN.exec(b.text)?.[0] === p.token);
  const postsIn = (channel: string): BotPost[] => slack.botPosts().filter((b) => b.channel === channel && !b.deleted);

  let live: Replica | null = null;

  it("messages sent while PostgreSQL refuses connections are answered once after it returns, also across a kill -9", async () => {
    const first = await start("o1");
    // Warm up: the database migrated, the pool's connections open.
    const warm = sendDm("DOUTWARM", "UOUTWARM", "p0001");
    await waitUntil("the warm-up DM answered", () => repliesTo(warm).length > 0, 30_000);
    // ...and done with: its delivery recorded and the 👀 off, so no statement of it is under way
    // when the connections are cut (a connection cut mid-statement is not what this test is about).
    await waitUntil("the warm-up's 👀 off", () => !slack.reactionsOn(warm.channel, warm.ts).includes("eyes"), 10_000);
    await new Promise((r) => setTimeout(r, 300));

    await proxy.refuse();
    // 4 conversations x 3 messages, interleaved: each conversation's in its own order.
    const conversations = ["DOUT000", "DOUT001", "DOUT002", "DOUT003"];
    const places: Place[] = [];
    for (let k = 0; k < 3; k++) {
      for (const [i, channel] of conversations.entries()) {
        places.push(sendDm(channel, `UOUT00${i}`, `p${1000 + k * 10 + i}`, k));
      }
    }
    const acked = await Promise.all(places.map((p) => slack.waitForAck(p.envelope, 15_000))).catch((err: unknown) => {
      throw new Error(`not every envelope acknowledged while PostgreSQL refused (${String(err)}); acked: ${places.filter((p) => slack.acks.some((a) => a.envelope_id === p.envelope)).map((p) => p.token).join(", ")}\n${output()}`);
    });
    const ackMs = Math.max(...acked.map((a, i) => a.at - places[i]!.sentAt));

    // One notice per conversation, and the 👀 on every message.
    await waitUntil("a storage notice in every conversation", () => conversations.every((c) => postsIn(c).some(isNotice)), 15_000).catch(() => undefined);
    await waitUntil("👀 on every message", () => places.every((p) => slack.reactionsOn(p.channel, p.ts).includes("eyes")), 15_000).catch(() => undefined);
    // A moment more for a second notice, should one come.
    await new Promise((r) => setTimeout(r, 1_000));
    const during = conversations.map((c) => postsIn(c).map((b) => b.text));
    expect(conversations.map((c) => postsIn(c).filter(isNotice).length), `posts per conversation during the outage: ${JSON.stringify(during)}\n${problemLines(started)}`).toEqual(conversations.map(() => 1));
    expect(slack.botPosts().filter(isWrongApology).map((b) => `${b.channel}: ${b.text}`)).toEqual([]);
    expect(places.filter((p) => !slack.reactionsOn(p.channel, p.ts).includes("eyes")).map((p) => p.token)).toEqual([]);
    expect(places.filter((p) => repliesTo(p).length > 0).map((p) => p.token)).toEqual([]);

    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    // The fake sees the connection go before a new one with the same label counts as the restart's.
    await waitUntil("the killed replica's connection closed", () => first.socket() === undefined, 10_000);
    await proxy.pass();

    const passedAt = Date.now();
    const second = await start("o1");
    live = second;
    await waitUntil("every message answered after the restart", () => places.every((p) => repliesTo(p).length > 0), 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; unanswered: ${places.filter((p) => repliesTo(p).length === 0).map((p) => p.token).join(", ")}\n${output()}`);
    });
    const answeredMs = Date.now() - passedAt;
    await waitUntil("👀 off every message", () => places.every((p) => !slack.reactionsOn(p.channel, p.ts).includes("eyes")), 10_000).catch(() => undefined);
    // A moment more for a second answer, should one come.
    await new Promise((r) => setTimeout(r, 1_500));

    expect(places.map((p) => `${p.token}: ${repliesTo(p).length}`)).toEqual(places.map((p) => `${p.token}: 1`));
    expect(places.map((p) => repliesTo(p)[0]!.text)).toEqual(places.map((p) => answerTo(p.token)));
    for (const c of conversations) {
      const mine = places.filter((p) => p.channel === c);
      const byArrival = [...mine].sort((a, b) => repliesTo(a)[0]!.seq - repliesTo(b)[0]!.seq).map((p) => p.token);
      expect(byArrival, `answers in ${c} in the order they reached Slack`).toEqual(mine.map((p) => p.token));
    }
    expect(conversations.map((c) => postsIn(c).filter(isNotice).length), "still one notice per conversation").toEqual(conversations.map(() => 1));
    expect(slack.botPosts().filter(isWrongApology).map((b) => `${b.channel}: ${b.text}`)).toEqual([]);
    expect(places.filter((p) => slack.reactionsOn(p.channel, p.ts).includes("eyes")).map((p) => p.token)).toEqual([]);

    // Stored once each: read straight from the database, not through the proxy.
    const client = new pg.Client({ connectionString: pgdb.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ platformId: string; n: number }>(
        `SELECT "platformId", count(*)::int AS n FROM "Message" WHERE role = 'user' AND "platformId" = ANY($1::text[]) GROUP BY "platformId"`,
        [places.map((p) => p.ts)],
      );
      const stored = new Map(rows.map((r) => [r.platformId, r.n]));
      expect(places.map((p) => `${p.token}: ${stored.get(p.ts) ?? 0}`)).toEqual(places.map((p) => `${p.token}: 1`));
    } finally {
      await client.end();
    }
    process.stdout.write(
      `outage 1: ${places.length} DMs in ${conversations.length} conversations acked within ${ackMs} ms while PostgreSQL refused; after kill -9 and a restart all answered once, in order, ${answeredMs} ms after PostgreSQL came back\n`,
    );
  });

  it("a hang: the envelope is acknowledged while PostgreSQL hangs, and answered after", async () => {
    await proxy.pass();
    const replica = live?.running() ? live : await start(`h${replicaCount}`);
    live = replica;
    // Connections open and in use before the hang.
    const warm = sendDm("DHANGWARM", "UHANGWARM", "p2001");
    await waitUntil("the warm-up DM answered", () => repliesTo(warm).length > 0, 30_000);

    proxy.hang();
    const place = sendDm("DHANG000", "UHANG000", "p2002");
    const ack = await slack.waitForAck(place.envelope, 5_000).catch((err: unknown) => {
      throw new Error(`not acknowledged while PostgreSQL hangs: ${String(err)}\n${output()}`);
    });
    const ackMs = ack.at - place.sentAt;
    // At the ack, nothing has answered it yet (nothing can: the database hangs).
    expect(repliesTo(place)).toEqual([]);
    const postsAtAck = postsIn(place.channel).map((b) => b.text);

    await proxy.pass();
    const passedAt = Date.now();
    const [answer] = await waitUntil("the answer after PostgreSQL answers again", () => (repliesTo(place).length > 0 ? repliesTo(place) : null), 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; posts in ${place.channel}: ${JSON.stringify(postsIn(place.channel).map((b) => b.text))}\n${output()}`);
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(answer!.text).toBe(answerTo(place.token));
    expect(answer!.at).toBeGreaterThanOrEqual(ack.at);
    expect(answer!.at).toBeGreaterThanOrEqual(passedAt);
    expect(repliesTo(place)).toHaveLength(1);
    expect(postsIn(place.channel).filter(isWrongApology).map((b) => b.text)).toEqual([]);
    await waitUntil("👀 off the message", () => !slack.reactionsOn(place.channel, place.ts).includes("eyes"), 10_000).catch(() => undefined);
    expect(slack.reactionsOn(place.channel, place.ts)).not.toContain("eyes");
    process.stdout.write(
      `outage 2: acked ${ackMs} ms after arrival while PostgreSQL hung (posts then: ${JSON.stringify(postsAtAck)}); answered ${answer!.at - passedAt} ms after it answered again\n`,
    );
  });
});

describe("start-up with a journal folder that cannot be written", () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let dir: string;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    dir = mkdtempSync(join(tmpdir(), "cairn-outage-"));
  });
  afterAll(async () => {
    await slack?.close();
    await anthropic?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("start-up refuses an unwritable journal folder with one sentence", async () => {
    // A regular file where the folder's parent should be: no mkdir gets past it, root or not.
    const blocker = join(dir, "not-a-folder");
    writeFileSync(blocker, "a file\n");
    const journal = join(blocker, "journal");
    const env = { ...replicaEnv({ databaseUrl: `file:${join(dir, "cairn.db")}`, anthropic, slack, label: "j1" }), CAIRN_JOURNAL_DIR: journal };
    const child = spawn(process.execPath, [...FROM_SOURCE], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const exit = await exited.finally(() => clearTimeout(timer));

    const said = `exit ${exit.code ?? exit.signal}; stderr:\n${stderr}\nstdout:\n${stdout.slice(-2000)}`;
    expect(exit.code, said).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines, said).toHaveLength(1);
    expect(lines[0], said).toMatch(/^cairn could not start: cannot write its journal in .*CAIRN_JOURNAL_DIR/);
    expect(lines[0], said).toContain(journal);
    // Nothing connected to Slack: it stopped before the platforms.
    expect(slack.sockets()).toEqual([]);
  });
});
