/**
 * /healthz, /readyz and /metrics on real servers on 127.0.0.1: on a port of their own
 * (CAIRN_HEALTH_PORT's server) against SQLite and PostgreSQL, and beside /slack/events in Slack's
 * HTTP mode with signed events still answered. Readiness follows the database, the migrations and
 * the platforms' real connections (Slack over HTTP and Socket Mode, Discord's gateway, all fakes).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { loadMigrations } from "../../src/db/migrate.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { Metrics } from "../../src/ops/metrics.ts";
import { healthRoutes, type HealthDeps } from "../../src/ops/health.ts";
import { MigrationStore } from "../../src/ops/migration-store.ts";
import { startHealthServer, type HealthServer } from "../../src/ops/server.ts";
import type { PlatformAdapter } from "../../src/ground/adapter.ts";
import { startSlack, type SlackHandle, type SlackSettings } from "../../src/platforms/slack/adapter.ts";
import { startDiscord } from "../../src/platforms/discord/adapter.ts";
import { ConsoleAdapter } from "../../src/platforms/console/console.ts";
import { forEachDatabase, freshPostgres, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { parsePrometheusText, sumOf } from "../support/prom-text.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { APP_TOKEN, SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { startFakeDiscord } from "../fakes/discord.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";

/** An adapter whose connection the test switches. */
class SwitchedAdapter extends FakeAdapter {
  up = true;
  connected(): boolean {
    return this.up;
  }
}

async function get(url: string, method = "GET"): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(url, { method });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

async function readyz(base: string): Promise<{ status: number; checks: Record<string, string>; said: string }> {
  const res = await get(`${base}/readyz`);
  const body = JSON.parse(res.body) as { status: string; checks: Record<string, string> };
  return { status: res.status, checks: body.checks, said: body.status };
}

forEachDatabase("health and readiness endpoints", (getDb) => {
  const servers: HealthServer[] = [];
  const serve = async (deps: Partial<HealthDeps> & Pick<HealthDeps, "adapters">): Promise<string> => {
    const server = await startHealthServer(healthRoutes({ database: new MigrationStore(getDb()), metrics: new Metrics({ processMetrics: false }), log: silentLogger, ...deps }), { port: 0, host: "127.0.0.1" });
    servers.push(server);
    return `http://127.0.0.1:${server.port}`;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("answers /healthz, and /readyz 200 until an adapter is not connected, then 503 naming it", async () => {
    const slack = new SwitchedAdapter("slack");
    // An adapter that cannot tell counts as connected.
    const base = await serve({ adapters: () => [slack, new FakeAdapter("discord")] });

    const health = await get(`${base}/healthz?probe=1`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ok" });
    expect(health.headers.get("cache-control")).toBe("no-store");

    expect(await readyz(base)).toEqual({ status: 200, said: "ready", checks: { database: "ok", migrations: "ok", slack: "ok", discord: "ok" } });
    slack.up = false;
    expect(await readyz(base)).toEqual({ status: 503, said: "not ready", checks: { database: "ok", migrations: "ok", slack: "not connected", discord: "ok" } });
    slack.up = true;
    expect((await readyz(base)).status).toBe(200);
  });

  it("says 503 when a migration this build knows is not applied", async () => {
    const known = loadMigrations(getDb().provider).map((m) => m.name);
    const base = await serve({ adapters: () => [], migrations: [...known, "29990101000000_from_the_future"] });
    expect(await readyz(base)).toEqual({ status: 503, said: "not ready", checks: { database: "ok", migrations: "not applied: 29990101000000_from_the_future" } });
  });

  it("says 503 once the database is closed", async () => {
    const provider = getDb().provider;
    const dir = mkdtempSync(join(tmpdir(), "cairn-health-"));
    const pg = provider === "postgresql" ? await freshPostgres() : null;
    const database = await openDatabase(pg ? pg.url : `file:${join(dir, "health.db")}`);
    try {
      const base = await serve({ database: new MigrationStore(database), adapters: () => [] });
      expect((await readyz(base)).status).toBe(200);
      await database.close();
      const after = await readyz(base);
      expect(after.status).toBe(503);
      expect(after.checks.database).toMatch(/^unreachable: /);
      expect(after.checks.migrations).toBe("not checked: the database is unreachable");
      // Alive all the same: the process runs.
      expect((await get(`${base}/healthz`)).status).toBe(200);
    } finally {
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("serves /metrics as Prometheus text, refuses other methods, and leaves other paths alone", async () => {
    const base = await serve({ adapters: () => [] });
    const metrics = await get(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(parsePrometheusText(metrics.body).has("cairn_turns_total")).toBe(true);

    const post = await get(`${base}/readyz`, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await get(`${base}/healthz`, "HEAD");
    expect([head.status, head.body]).toEqual([200, ""]);
    expect((await get(`${base}/slack/events`)).status).toBe(404);
  });
});

describe("the endpoints beside Slack, and the platforms' connections", () => {
  let dir: string;
  let database: Database;
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let http: SlackHandle;
  let socket: SlackHandle;
  let ownPort: HealthServer;
  const team = uniqueId("T");

  const settings = (extra: Partial<SlackSettings> = {}): SlackSettings => fakeSlackSettings(slack, { retries: 0, ...extra });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-health-slack-"));
    database = await openDatabase(`file:${join(dir, "cairn.db")}`);
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: "Hello from cairn." });
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await http?.stop();
    await socket?.stop();
    await ownPort?.close();
    await slack?.close();
    await anthropic?.close();
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers /healthz, /readyz and /metrics on Slack's HTTP port, and signed events as before", async () => {
    const core = makeCore(database, anthropic, { bundledSkillsDir: null });
    const adapters = (): PlatformAdapter[] => [http, socket];
    const routes = healthRoutes({ database: new MigrationStore(database), metrics: core.metrics, log: silentLogger, adapters });
    http = await startSlack(core, settings({ signingSecret: SIGNING_SECRET, routes }), silentLogger);
    socket = await startSlack(core, settings({ appToken: APP_TOKEN }), silentLogger);
    await slack.waitForSocket();
    const base = `http://127.0.0.1:${http.port}`;

    expect((await get(`${base}/healthz`)).status).toBe(200);
    expect(await readyz(base)).toEqual({ status: 200, said: "ready", checks: { database: "ok", migrations: "ok", slack: "ok", "slack#2": "ok" } });

    // A signed event is answered; an unsigned one is still refused.
    const ts = slack.nextTs();
    const event = { type: "message", channel_type: "im", channel: "D0HEALTH", user: "U0DANA", text: "hi", ts, event_ts: ts };
    expect((await postSigned(`${base}/slack/events`, eventCallback(team, event))).status).toBe(200);
    await waitUntil("the answer", () => slack.callsTo("chat.postMessage").some((c) => c.args.channel === "D0HEALTH"), 15_000);
    expect((await postSigned(`${base}/slack/events`, eventCallback(team, event), { signature: "v0=forged" })).status).toBe(401);
    const metrics = await get(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    await waitUntil("the turn counted", async () => sumOf(parsePrometheusText((await get(`${base}/metrics`)).body), "cairn_turns_total", { outcome: "ok" }) === 1);

    // Socket Mode disconnected: not ready, and the check says which adapter.
    await socket.stop();
    expect(socket.connected?.()).toBe(false);
    expect(await readyz(base)).toMatchObject({ status: 503, checks: { slack: "ok", "slack#2": "not connected" } });

    // The HTTP adapter stopped: its own port is gone, CAIRN_HEALTH_PORT's server says so.
    ownPort = await startHealthServer(healthRoutes({ database: new MigrationStore(database), metrics: core.metrics, log: silentLogger, adapters: () => [http] }), { port: 0, host: "127.0.0.1" });
    const own = `http://127.0.0.1:${ownPort.port}`;
    expect((await readyz(own)).status).toBe(200);
    await http.stop();
    expect(await readyz(own)).toMatchObject({ status: 503, checks: { slack: "not connected" } });
  });

  it("reports Discord connected while its gateway is up, and the console while it chats", async () => {
    const discord = await startFakeDiscord({ guilds: [{ id: "500000000000000001", name: "Acme", channels: [{ id: "500000000000000002", name: "general" }], members: [] }] });
    try {
      const core = makeCore(database, anthropic, { bundledSkillsDir: null });
      const adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { shutdownGraceMs: 1_000 });
      expect(adapter.connected?.()).toBe(true);
      await adapter.stop();
      expect(adapter.connected?.()).toBe(false);
    } finally {
      await discord.close();
    }
    const { PassThrough } = await import("node:stream");
    const input = new PassThrough();
    const chat = new ConsoleAdapter({ input, output: new PassThrough(), user: "dana" });
    expect(chat.connected()).toBe(false);
    const running = chat.run(makeCore(database, anthropic, { bundledSkillsDir: null }));
    await waitUntil("the console running", () => chat.connected());
    input.end("/quit\n");
    await running;
    expect(chat.connected()).toBe(false);
  });
});
