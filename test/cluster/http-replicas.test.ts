/**
 * Replicas in Slack's HTTP mode behind a load balancer (`npm run test:cluster`): two cairn
 * processes, each listening on its own PORT, behind a round-robin proxy at the Request URL, on one
 * PostgreSQL database. The test plays Slack: every event is a signed POST to the proxy; one not
 * answered 200 within 3 s is sent again with `X-Slack-Retry-Num` (up to three retries), as Slack
 * does. The proxy behaves as nginx does by default: a backend that refuses the connection is
 * skipped for the next one (the request was never sent), a backend that dies after taking the
 * request answers 502, and Slack's retry goes wherever the proxy sends it.
 * 120 posts across 30 conversations; one replica killed (SIGKILL) a third of the way, just after the
 * proxy handed it a request (so Slack gets a 502 and retries that event on the other): every post
 * answered exactly once, in the right place, in order within each conversation where Slack did not
 * have to retry.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { findRoot } from "../../src/ground/paths.ts";
import { echoToken, startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { eventCallback, postSigned, SIGNING_SECRET, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { freePort, waitUntil } from "../fakes/http.ts";
import { freshPostgres, postgresSuite } from "../support/db.ts";
import { analyse, answerTo, eventsOf, planLoad, sendAtRate, settle, TOKEN, type Post } from "./load.ts";
import { FROM_SOURCE, killAll, problemLines, replicaEnv, startReplica, type Replica } from "./replicas.ts";

const ROOT = findRoot(new URL(".", import.meta.url).pathname);
const RATE = 8;
const MODEL_MS = 20;
/** Slack's deadline for a 200, and the waits before its retries (minutes at Slack; shortened here). */
const SLACK_DEADLINE_MS = 3_000;
const RETRY_AFTER_MS = [500, 1_000, 2_000];

interface Proxy {
  url: string;
  /** Requests forwarded, by backend port. */
  forwarded: Map<number, number>;
  /** Answered 502: the backend died with the request. */
  failed: number;
  /** Runs `fn` once, just after the next request is sent on to the backend at `port`. */
  onNextTo(port: number, fn: () => void): void;
  close(): Promise<void>;
}

/** A round-robin proxy over `backends`, as nginx's defaults: a refused connection tries the next backend. */
async function startProxy(backends: number[]): Promise<Proxy> {
  let next = 0;
  const forwarded = new Map<number, number>();
  let armed: { port: number; fn: () => void } | null = null;
  const proxy: Proxy = { url: "", forwarded, failed: 0, close: async () => undefined, onNextTo: (port, fn) => void (armed = { port, fn }) };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const first = next++;
      const attempt = (tried: number): void => {
        if (tried >= backends.length) return void res.writeHead(502).end("no backend");
        const port = backends[(first + tried) % backends.length]!;
        const out = http.request({ host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers, agent: false }, (back) => {
          forwarded.set(port, (forwarded.get(port) ?? 0) + 1);
          res.writeHead(back.statusCode ?? 502, back.headers);
          back.pipe(res);
        });
        out.on("error", (err: NodeJS.ErrnoException) => {
          if (err.code === "ECONNREFUSED") return attempt(tried + 1);
          proxy.failed += 1;
          if (!res.headersSent) res.writeHead(502).end("backend failed");
        });
        out.end(body, () => {
          if (armed?.port !== port) return;
          const { fn } = armed;
          armed = null;
          fn();
        });
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  proxy.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return proxy;
}

/** Slack's side: each post's events POSTed to the Request URL, retried when not answered 200 in time. */
function httpSender(slack: FakeSlack, url: string, team: string, retried: Set<string>, why: Map<string, number>) {
  const deliver = async (body: Record<string, unknown>, post: Post, retryNum = 0): Promise<void> => {
    const status = await Promise.race([
      postSigned(url, body, retryNum ? { retryNum, retryReason: "http_timeout" } : {}).then((r) => r.status, () => 0),
      new Promise<number>((r) => setTimeout(() => r(0), SLACK_DEADLINE_MS)),
    ]);
    if (status === 200 || retryNum >= RETRY_AFTER_MS.length) return;
    retried.add(post.token);
    const reason = status === 0 ? "no answer in 3 s or connection failed" : `status ${status}`;
    why.set(reason, (why.get(reason) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, RETRY_AFTER_MS[retryNum]));
    return deliver(body, post, retryNum + 1);
  };
  return async (post: Post): Promise<void> => {
    const c = post.conversation;
    post.ts = slack.seedMessage({ channel: c.channel, user: post.user, text: post.text, ...(c.threadTs ? { thread_ts: c.threadTs } : {}) });
    post.sentAt = Date.now();
    // Not awaited: Slack sends the next event while this one waits for its answer.
    for (const event of eventsOf(post)) void deliver(eventCallback(team, event), post);
  };
}

postgresSuite()("cairn replicas in Slack's HTTP mode behind a load balancer", () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let proxy: Proxy | null = null;
  const replicas: Replica[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault(echoToken(TOKEN, answerTo, MODEL_MS));
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await killAll(replicas);
    await proxy?.close();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await slack?.close();
    await anthropic?.close();
  });

  it("answers every post once when one of two replicas is killed mid-run", async () => {
    const pg = await freshPostgres();
    cleanups.push(() => pg.drop());
    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      const label = `h${i + 1}`;
      const env = replicaEnv({ databaseUrl: pg.url, anthropic, slack, label, extra: { CAIRN_TURN_LEASE_MS: "2000", CAIRN_ORDER_WINDOW_MS: "1000" } });
      delete env.SLACK_APP_TOKEN;
      Object.assign(env, { SLACK_SIGNING_SECRET: SIGNING_SECRET, PORT: String(port) });
      // One after the other: the first applies the migrations.
      replicas.push(await startReplica(slack, { label, argv: FROM_SOURCE, cwd: ROOT, env, readyUrl: `http://127.0.0.1:${port}/readyz` }));
    }
    proxy = await startProxy(ports);
    const plan = planLoad(slack, { team: slack.bot.teamId, conversations: 30, postsEach: 4, dmShare: 0.5, channels: 3, seed: 11, tag: "H" });
    const retried = new Set<string>();
    const why = new Map<string, number>();
    const sending = sendAtRate(plan, httpSender(slack, proxy.url, plan.team, retried, why), RATE);
    const tokens = new Set(plan.posts.map((p) => p.token));
    await waitUntil("a third answered", () => slack.botPosts().filter((b) => tokens.has(TOKEN.exec(b.text)?.[0] ?? "")).length >= 40, 60_000);
    // Killed with a request in its hands: the proxy answers Slack 502, and Slack sends it again.
    const victim = replicas[0]!;
    proxy.onNextTo(ports[0]!, () => victim.child.kill("SIGKILL"));
    await victim.exited;
    await sending;
    await settle(slack, plan, { quietMs: 10_000, timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 2_500));
    const o = analyse(slack, plan);
    const disorderedUnretried = o.disordered.filter((d) => !plan.posts.some((p) => p.conversation.index === d.conversation && retried.has(p.token)));
    process.stdout.write(
      `cluster http: posts ${o.posts}, replies ${o.replies}, duplicates ${o.duplicates.length}, losses ${o.lost.length}, misplaced ${o.misplaced.length}, unmatched ${o.unmatched.length}, ` +
        `out of order where Slack did not retry ${disorderedUnretried.length}; requests forwarded ${[...proxy.forwarded].map(([port, n]) => `${ports.indexOf(port) === 0 ? "h1" : "h2"} ${n}`).join(", ")}, ` +
        `502s ${proxy.failed}, posts Slack retried ${retried.size} (${[...why].map(([r, n]) => `${n}x ${r}`).join(", ")})\n`,
    );
    expect(o.lost.map((p) => p.token), `lost; replicas' warnings:\n${problemLines(replicas)}`).toEqual([]);
    expect(o.duplicates.map((d) => d.token)).toEqual([]);
    expect(o.misplaced).toEqual([]);
    expect(o.unmatched).toEqual([]);
    expect(disorderedUnretried).toEqual([]);
    // Both replicas took requests, and the victim died holding one that Slack then sent again.
    expect([...proxy.forwarded.values()].every((n) => n > 0)).toBe(true);
    expect(why.get("status 502") ?? 0).toBeGreaterThan(0);
  });
});
