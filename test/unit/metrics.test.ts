/**
 * The Metrics class and what feeds it: counters by label, tokens by type, errors derived from
 * failures, scrape-time gauges (a failing source leaves its gauge empty, not the scrape), separate
 * registries per instance, and the model client and tool registry wrappers. Every exposition is
 * read with the strict parser.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Metrics } from "../../src/ops/metrics.ts";
import { instrumentModel } from "../../src/agent/model-metrics.ts";
import { countTurn } from "../../src/ops/core-metrics.ts";
import { createModelClient, ModelUnavailableError, type ModelClient } from "../../src/agent/model.ts";
import { defineTool, ToolError, ToolRegistry, type Tool, type ToolContext } from "../../src/tools/registry.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { parsePrometheusText, samplesOf, sumOf, type Family } from "../support/prom-text.ts";
import { forgeScope } from "../support/scopes.ts";

const scrape = async (m: Metrics): Promise<Map<string, Family>> => parsePrometheusText(await m.expose());

describe("Metrics", () => {
  it("counts turns by outcome, with every outcome and error kind present from the start", async () => {
    const m = new Metrics({ processMetrics: false });
    let f = await scrape(m);
    expect(samplesOf(f, "cairn_turns_total").map((s) => s.labels.outcome).sort()).toEqual(
      ["command", "dropped_bot", "dropped_duplicate", "dropped_empty", "dropped_taken_over", "error", "failed", "limited", "ok", "refused"],
    );
    expect(sumOf(f, "cairn_turns_total")).toBe(0);
    expect(samplesOf(f, "cairn_errors_total").map((s) => s.labels.kind).sort()).toEqual(["delivery", "job", "model", "tool", "turn", "unhandled"]);

    m.turn("ok", 1.5);
    m.turn("ok", 0.2);
    m.turn("refused", 0.01);
    m.turn("dropped_bot");
    f = await scrape(m);
    expect(sumOf(f, "cairn_turns_total", { outcome: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_turns_total", { outcome: "refused" })).toBe(1);
    expect(sumOf(f, "cairn_turns_total", { outcome: "dropped_bot" })).toBe(1);
    expect(sumOf(f, "cairn_turn_duration_seconds_count", { outcome: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_turn_duration_seconds_sum", { outcome: "ok" })).toBeCloseTo(1.7);
    expect(sumOf(f, "cairn_turn_duration_seconds_bucket", { outcome: "ok", le: "0.25" })).toBe(1);
    // A drop is not timed.
    expect(samplesOf(f, "cairn_turn_duration_seconds_count", { outcome: "dropped_bot" })).toEqual([]);
    expect(f.get("cairn_turns_total")?.type).toBe("counter");
    expect(f.get("cairn_turn_duration_seconds")?.type).toBe("histogram");
  });

  it("counts model calls, their latency and tokens by type; a failure is a model error, a cancellation is not", async () => {
    const m = new Metrics({ processMetrics: false });
    const model = "claude-sonnet-5-5";
    m.modelCall({ purpose: "turn", model, seconds: 0.8, result: "ok", usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 400, cache_creation_input_tokens: 50 } });
    m.modelCall({ purpose: "turn", model, seconds: 1.2, result: "ok", usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: null, cache_creation_input_tokens: null } });
    m.modelCall({ purpose: "review", model, seconds: 0.5, result: "ok", usage: { input_tokens: 9, output_tokens: 1 } });
    m.modelCall({ purpose: "turn", model, seconds: 30, result: "exhausted", usage: null });
    m.modelCall({ purpose: "curator", model, seconds: 0.1, result: "aborted", usage: null });
    const f = await scrape(m);
    const tokens = (purpose: string, type: string) => sumOf(f, "cairn_model_tokens_total", { purpose, model, type });
    expect([tokens("turn", "input"), tokens("turn", "cache_read"), tokens("turn", "cache_write"), tokens("turn", "output")]).toEqual([107, 400, 50, 23]);
    expect([tokens("review", "input"), tokens("review", "output"), tokens("review", "cache_read")]).toEqual([9, 1, 0]);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "turn", result: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "turn", result: "exhausted" })).toBe(1);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "curator", result: "aborted" })).toBe(1);
    expect(sumOf(f, "cairn_model_call_duration_seconds_count", { purpose: "turn" })).toBe(3);
    expect(sumOf(f, "cairn_model_call_duration_seconds_bucket", { purpose: "turn", result: "exhausted", le: "15" })).toBe(0);
    expect(sumOf(f, "cairn_model_call_duration_seconds_bucket", { purpose: "turn", result: "exhausted", le: "30" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "model" })).toBe(1);
  });

  it("counts tool calls and jobs, and the errors among them", async () => {
    const m = new Metrics({ processMetrics: false });
    m.toolCall("memory", "ok");
    m.toolCall("memory", "ok");
    m.toolCall("memory", "refused");
    m.toolCall("session_search", "failed");
    m.job("review", "done");
    m.job("review", "retry");
    m.job("report", "failed");
    m.job("curator", "lost");
    const f = await scrape(m);
    expect(sumOf(f, "cairn_tool_calls_total", { tool: "memory", result: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_tool_calls_total", { tool: "memory", result: "refused" })).toBe(1);
    expect(sumOf(f, "cairn_tool_calls_total", { tool: "session_search", result: "failed" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "tool" })).toBe(1);
    expect(sumOf(f, "cairn_jobs_total", { kind: "review" })).toBe(2);
    expect(sumOf(f, "cairn_jobs_total", { kind: "curator", result: "lost" })).toBe(1);
    // A retry and a final failure are errors; a lost lease is another worker's job now.
    expect(sumOf(f, "cairn_errors_total", { kind: "job" })).toBe(2);
  });

  it("reads the gauges when scraped, and serves the rest when a source fails", async () => {
    const m = new Metrics({ processMetrics: false });
    let open = 2;
    let rows = [
      { kind: "review", status: "queued", count: 3 },
      { kind: "review", status: "running", count: 1 },
    ];
    let broken = false;
    m.watch({
      jobQueue: async () => {
        if (broken) throw new Error("database down");
        return rows;
      },
      openConversations: () => open,
    });
    let f = await scrape(m);
    expect(sumOf(f, "cairn_open_conversations")).toBe(2);
    expect(sumOf(f, "cairn_job_queue_depth", { kind: "review", status: "queued" })).toBe(3);
    expect(sumOf(f, "cairn_job_queue_depth", { kind: "review", status: "running" })).toBe(1);

    // A kind that emptied out disappears instead of keeping its last value.
    open = 0;
    rows = [{ kind: "lesson", status: "queued", count: 1 }];
    f = await scrape(m);
    expect(sumOf(f, "cairn_open_conversations")).toBe(0);
    expect(samplesOf(f, "cairn_job_queue_depth").map((s) => s.labels)).toEqual([{ kind: "lesson", status: "queued" }]);

    broken = true;
    m.turn("ok", 1);
    f = await scrape(m);
    expect(samplesOf(f, "cairn_job_queue_depth")).toEqual([]);
    expect(sumOf(f, "cairn_turns_total", { outcome: "ok" })).toBe(1);
  });

  it("keeps each instance's counts apart, and adds the process metrics under cairn_ unless told not to", async () => {
    const a = new Metrics();
    const b = new Metrics({ processMetrics: false });
    a.turn("failed", 1);
    const fa = await scrape(a);
    const fb = await scrape(b);
    expect(sumOf(fa, "cairn_turns_total", { outcome: "failed" })).toBe(1);
    expect(sumOf(fb, "cairn_turns_total", { outcome: "failed" })).toBe(0);
    expect(fa.has("cairn_process_cpu_seconds_total")).toBe(true);
    expect(fa.has("cairn_nodejs_eventloop_lag_seconds")).toBe(true);
    expect(fb.has("cairn_process_cpu_seconds_total")).toBe(false);
    expect([...fa.keys(), ...fb.keys()].every((name) => name.startsWith("cairn_"))).toBe(true);
    expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("counts a turn from what handling it settled into", async () => {
    const m = new Metrics({ processMetrics: false });
    await countTurn(m, Promise.resolve({ kind: "dropped", reason: "duplicate" }));
    await countTurn(m, Promise.resolve({ kind: "reply", reply: { status: "limited", text: "later", conversationId: "c", replyMessageId: 1 } }));
    await expect(countTurn(m, Promise.reject(new Error("database gone")))).rejects.toThrow("database gone");
    const f = await scrape(m);
    expect(sumOf(f, "cairn_turns_total", { outcome: "dropped_duplicate" })).toBe(1);
    expect(sumOf(f, "cairn_turns_total", { outcome: "limited" })).toBe(1);
    expect(sumOf(f, "cairn_turns_total", { outcome: "error" })).toBe(1);
  });
});

describe("the model client, measured", () => {
  let fake: FakeAnthropic;
  let client: ModelClient;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = createModelClient({ apiKey: fake.apiKey, baseURL: fake.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const params = (model = "claude-haiku-5-5") => ({ model, max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] });

  it("records plain and streamed calls with the usage the API reported, and failures by reason", async () => {
    const m = new Metrics({ processMetrics: false });
    const measured = instrumentModel(client, m, "summary");
    fake.enqueue(
      { text: "a", usage: { input_tokens: 11, output_tokens: 2, cache_read_input_tokens: 30, cache_creation_input_tokens: 40 } },
      { text: "streamed", usage: { input_tokens: 5, output_tokens: 6, cache_read_input_tokens: 7, cache_creation_input_tokens: 0 } },
      { error: 400 },
    );
    const call = { workspaceId: "ws-1" };
    await measured.create(params(), call);
    const deltas: string[] = [];
    await measured.stream!(params(), (d) => deltas.push(d), call);
    expect(deltas.join("")).toBe("streamed");
    await expect(measured.create(params(), call)).rejects.toBeInstanceOf(ModelUnavailableError);
    const f = await scrape(m);
    const tokens = (type: string) => sumOf(f, "cairn_model_tokens_total", { purpose: "summary", model: "claude-haiku-5-5", type });
    expect([tokens("input"), tokens("cache_read"), tokens("cache_write"), tokens("output")]).toEqual([16, 37, 40, 8]);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "summary", result: "ok" })).toBe(2);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "summary", result: "not_retryable" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "model" })).toBe(1);
  });

  it("keeps a client without streaming without it, and counts a cancelled call as aborted", async () => {
    const m = new Metrics({ processMetrics: false });
    const plain: ModelClient = { create: (p, o) => client.create(p, o) };
    const measured = instrumentModel(plain, m, "report");
    expect(measured.stream).toBeUndefined();
    fake.enqueue({ delayMs: 5_000, then: { text: "late" } });
    const controller = new AbortController();
    const cancelled = measured.create(params(), { signal: controller.signal, workspaceId: "ws-1" });
    await fake.waitForRequests(1);
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    const f = await scrape(m);
    expect(sumOf(f, "cairn_model_calls_total", { purpose: "report", result: "aborted" })).toBe(1);
    expect(sumOf(f, "cairn_errors_total", { kind: "model" })).toBe(0);
  });
});

describe("the tool registry, observed", () => {
  const ctx: ToolContext = { scope: forgeScope({ workspaceId: "w", personId: "p", conversationId: "c", channelKey: "C1", isDm: true }), sourceMessageId: 1, sessionId: "s", speakerName: "Alice" };
  const echo = defineTool({
    name: "echo",
    description: "says it back",
    input: z.object({ text: z.string() }),
    run: async ({ text }) => {
      if (text === "no") throw new ToolError("refused");
      if (text === "boom") throw new Error("bug");
      return text;
    },
  });

  it("reports every call with its result; an unknown tool's invented name stays out of the labels", async () => {
    const m = new Metrics({ processMetrics: false });
    const tools = new ToolRegistry([echo as Tool], () => {}, (tool, result) => m.toolCall(tool, result));
    await tools.execute("echo", { text: "hi" }, ctx);
    await tools.execute("echo", { text: "no" }, ctx);
    await tools.execute("echo", { text: "boom" }, ctx);
    await tools.execute("echo", { words: 3 }, ctx);
    await tools.execute("made_up_tool_name", {}, ctx);
    const f = await scrape(m);
    expect(samplesOf(f, "cairn_tool_calls_total").map((s) => [s.labels.tool, s.labels.result, s.value])).toEqual([
      ["echo", "ok", 1],
      ["echo", "refused", 1],
      ["echo", "failed", 1],
      ["echo", "invalid", 1],
      ["unknown", "invalid", 1],
    ]);
    expect(sumOf(f, "cairn_errors_total", { kind: "tool" })).toBe(1);
  });
});
