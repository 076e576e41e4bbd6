/**
 * GET /metrics after real work: a real core on SQLite and PostgreSQL, the real SDK against the
 * fake Anthropic server (which reports the token usage each reply scripts), and the endpoints on a
 * real server on 127.0.0.1. The counters must equal what happened (turns by outcome, tokens summed
 * from the scripted usage, tool calls, model failures, jobs) and the whole body must parse as the
 * Prometheus text format.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { Core } from "../../src/app/core.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { defineJob } from "../../src/jobs/worker.ts";
import { Metrics } from "../../src/ops/metrics.ts";
import { healthRoutes } from "../../src/ops/health.ts";
import { MigrationStore } from "../../src/ops/migration-store.ts";
import { startHealthServer, type HealthServer } from "../../src/ops/server.ts";
import type { AgentSettings } from "../../src/app/agent-settings.ts";
import type { HandleResult } from "../../src/ground/types.ts";
import { forEachDatabase, inboundFor, uniqueId, type Database, type PlaceOptions } from "../support/db.ts";
import { TEST_SETTINGS } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { parsePrometheusText, samplesOf, sumOf, type Family } from "../support/prom-text.ts";
import { startFakeAnthropic, type FakeAnthropic, type FakeUsage } from "../fakes/anthropic.ts";

const MODEL = TEST_SETTINGS.model;

/** A core of its own with its own Metrics, and /metrics for it on a free port. */
async function serve(db: Database, fake: FakeAnthropic, settings: Partial<AgentSettings>, handlers = [] as ReturnType<typeof defineJob>[]) {
  const metrics = new Metrics();
  const model = createModelClient({ apiKey: fake.apiKey, baseURL: fake.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
  const core = new Core({ database: db, model, settings: { ...TEST_SETTINGS, bundledSkillsDir: null, ...settings }, log: silentLogger, metrics, handlers });
  const server = await startHealthServer(healthRoutes({ database: new MigrationStore(db), metrics, log: silentLogger, adapters: () => [] }), { port: 0, host: "127.0.0.1" });
  const scrape = async (): Promise<Map<string, Family>> => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
    return parsePrometheusText(await res.text());
  };
  return { core, server, scrape };
}

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0): FakeUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});

forEachDatabase("metrics end to end", (getDb) => {
  let fake: FakeAnthropic;
  const servers: HealthServer[] = [];
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it("counts turns by outcome, model calls and tokens, tool calls, errors and jobs as they happened", async () => {
    const ws = uniqueId("T");
    const users = ["UALICE", "UBOB", "UCAROL", "UDAVE", "UERIN"];
    const handlers = [
      defineJob({ kind: "metrics-ok", payload: z.object({}), run: async () => "fine" }),
      defineJob({
        kind: "metrics-flaky",
        payload: z.object({}),
        run: async () => {
          throw new Error("flaky");
        },
      }),
      defineJob({
        kind: "metrics-doomed",
        payload: z.object({}),
        run: async () => {
          throw new Error("doomed");
        },
      }),
    ];
    const { core, server, scrape } = await serve(
      getDb(),
      fake,
      { access: accessPolicy({ admins: [], users: users.map((u) => `slack:${u}`), channels: [], roles: [] }), rateLimitPerHour: 2 },
      handlers,
    );
    servers.push(server);
    const dm = (user: string): PlaceOptions => ({ workspace: ws, user, channel: `D-${user}`, isDm: true, name: user });
    const say = (user: string, text: string): Promise<HandleResult> => core.handle(inboundFor(dm(user), text));
    const status = (r: HandleResult) => (r.kind === "reply" ? r.reply.status : `dropped_${r.reason}`);
    const scripted: FakeUsage[] = [];
    const reply = <T extends object>(step: T, u: FakeUsage): T & { usage: FakeUsage } => {
      scripted.push(u);
      return { ...step, usage: u };
    };

    // Alice: an answer, then a tool call that works; her third message is over the hourly limit.
    fake.enqueue(reply({ text: "Hello." }, usage(120, 8, 900, 300)));
    expect(status(await say("UALICE", "hi"))).toBe("ok");
    fake.enqueue(
      reply({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Prefers short answers" }] } }] }, usage(130, 40, 900, 0)),
      reply({ text: "Noted." }, usage(180, 5, 1_000, 60)),
    );
    expect(status(await say("UALICE", "I prefer short answers"))).toBe("ok");
    expect(status(await say("UALICE", "one more"))).toBe("limited");

    // Bob: bad arguments and a tool that does not exist, then an answer.
    fake.enqueue(
      reply({ toolUse: [{ name: "memory", input: { nonsense: true } }, { name: "frobnicate", input: {} }] }, usage(95, 30, 0, 700)),
      reply({ text: "Sorry, that did not work." }, usage(150, 9, 700, 0)),
    );
    expect(status(await say("UBOB", "remember something"))).toBe("ok");

    // Carol: the model refuses the request (400 is not retried): a failed turn and a model error.
    fake.enqueue({ error: 400 });
    expect(status(await say("UCAROL", "hello?"))).toBe("failed");

    // Mallory may not use cairn; a bot, an empty message and a platform's double delivery are no turns.
    expect(status(await say("UMALLORY", "let me in"))).toBe("refused");
    expect(status(await core.handle({ ...inboundFor(dm("UDAVE"), "beep"), author: { externalId: "BOT", isBot: true } }))).toBe("dropped_bot");
    expect(status(await say("UDAVE", " \u200b "))).toBe("dropped_empty");
    const twice = inboundFor(dm("UDAVE"), "are you there?");
    fake.enqueue(reply({ text: "Yes." }, usage(60, 2)));
    expect(status(await core.handle(twice))).toBe("ok");
    expect(status(await core.handle(twice))).toBe("dropped_duplicate");

    // Erin's answer is slow: while it is out, her conversation is open.
    fake.enqueue({ delayMs: 400, then: reply({ text: "Finally." }, usage(70, 3, 10, 0)) });
    const slow = say("UERIN", "take your time");
    await fake.waitForRequests(fake.requests.length + 1);
    expect(sumOf(await scrape(), "cairn_open_conversations")).toBe(1);
    expect(status(await slow)).toBe("ok");

    // Jobs: one done, one failed and queued again, one failed for good.
    await core.jobs.enqueue("metrics-ok", {});
    await core.jobs.enqueue("metrics-flaky", {}, { maxAttempts: 3 });
    await core.jobs.enqueue("metrics-doomed", {}, { maxAttempts: 1 });
    await core.learning.drain();

    const f = await scrape();
    const turns = Object.fromEntries(samplesOf(f, "cairn_turns_total").map((s) => [s.labels.outcome, s.value]));
    expect(turns).toEqual({ ok: 5, failed: 1, refused: 1, limited: 1, command: 0, dropped_duplicate: 1, dropped_bot: 1, dropped_empty: 1, dropped_taken_over: 0, error: 0 });
    expect(sumOf(f, "cairn_turn_duration_seconds_count", { outcome: "ok" })).toBe(5);
    expect(sumOf(f, "cairn_turn_duration_seconds_count", { outcome: "failed" })).toBe(1);

    // Every request the fake answered is one call here (the 400 included), all for turns.
    expect(sumOf(f, "cairn_model_calls_total")).toBe(fake.requests.length);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "turn", model: MODEL, result: "ok" })).toBe(scripted.length);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "turn", model: MODEL, result: "not_retryable" })).toBe(1);
    expect(sumOf(f, "cairn_model_call_duration_seconds_count")).toBe(fake.requests.length);
    expect(sumOf(f, "cairn_model_call_duration_seconds_bucket", { result: "ok", le: "0.25" })).toBeLessThan(scripted.length);
    const total = (key: keyof FakeUsage) => scripted.reduce((n, u) => n + u[key], 0);
    const tokens = (type: string) => sumOf(f, "cairn_model_tokens_total", { purpose: "turn", model: MODEL, type });
    expect({ input: tokens("input"), cache_read: tokens("cache_read"), cache_write: tokens("cache_write"), output: tokens("output") }).toEqual({
      input: total("input_tokens"),
      cache_read: total("cache_read_input_tokens"),
      cache_write: total("cache_creation_input_tokens"),
      output: total("output_tokens"),
    });

    expect(samplesOf(f, "cairn_tool_calls_total").map((s) => [s.labels.tool, s.labels.result, s.value]).sort()).toEqual([
      ["memory", "invalid", 1],
      ["memory", "ok", 1],
      ["unknown", "invalid", 1],
    ]);
    const errors = Object.fromEntries(samplesOf(f, "cairn_errors_total").map((s) => [s.labels.kind, s.value]));
    expect(errors).toEqual({ model: 1, turn: 0, tool: 0, job: 2, delivery: 0, unhandled: 0 });
    expect(samplesOf(f, "cairn_jobs_total").map((s) => [s.labels.kind, s.labels.result, s.value]).sort()).toEqual([
      ["metrics-doomed", "failed", 1],
      ["metrics-flaky", "retry", 1],
      ["metrics-ok", "done", 1],
    ]);
    // The flaky job waits for its retry; the others are finished.
    expect(sumOf(f, "cairn_job_queue_depth", { kind: "metrics-flaky", status: "queued" })).toBe(1);
    expect(samplesOf(f, "cairn_job_queue_depth", { kind: "metrics-ok" })).toEqual([]);
    expect(sumOf(f, "cairn_open_conversations")).toBe(0);
    // The process metrics come with the core's own.
    expect(f.get("cairn_process_resident_memory_bytes")?.type).toBe("gauge");
  });

  it("counts a review's model calls under its purpose, its job, and a reply the platform refused", async () => {
    const { core, server, scrape } = await serve(getDb(), fake, { learning: { reviewEveryTurns: 1, skillReviewToolCalls: 0 } });
    servers.push(server);
    const adapter = new FakeAdapter();
    core.attach(adapter);
    const alice: PlaceOptions = { workspace: uniqueId("T"), user: "UALICE", channel: "D-UALICE", isDm: true, name: "Alice" };
    fake.setDefault({ text: "ok", usage: usage(10, 1) });

    const answered = await core.receive(inboundFor(alice, "hello"), adapter.target(alice.channel));
    expect(answered).toMatchObject({ kind: "replied", status: "ok", failed: false });
    // The review the reply triggered runs on the worker, with the model under its own purpose.
    await core.learning.drain();

    // Slack (here: the fake) refuses every part of the next answer, and the apology too.
    const refused = await core.receive(inboundFor(alice, "again"), adapter.target(alice.channel, async () => {
      throw new Error("channel_not_found");
    }));
    expect(refused).toMatchObject({ kind: "replied", failed: true });

    const f = await scrape();
    expect(sumOf(f, "cairn_turns_total", { outcome: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "turn", result: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "review", result: "ok" })).toBeGreaterThanOrEqual(1);
    expect(sumOf(f, "cairn_model_tokens_total", { purpose: "review", type: "input" })).toBe(10 * sumOf(f, "cairn_model_calls_total", { purpose: "review" }));
    expect(sumOf(f, "cairn_jobs_total", { kind: "review", result: "done" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "delivery" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "model" })).toBe(0);
  });
});
