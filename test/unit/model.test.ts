/**
 * The model client against the fake Anthropic server. The SDK is real; only the API is fake, so
 * these tests cover status codes, headers, timeouts and SSE framing as the SDK actually sees them.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, OverloadedError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createModelClient,
  isRetryable,
  ModelUnavailableError,
  type ModelClientConfig,
} from "../../src/agent/model.ts";
import { NO_SCRIPTED_REPLY, startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";

const MODEL = "claude-test";
/** The workspace a call counts in: nothing here counts usage. */
const CALL = { workspaceId: "" };

let fake: FakeAnthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

/** A client wired to the fake, with a sleep that records delays and returns at once. */
function client(overrides: Partial<ModelClientConfig> = {}): {
  model: ReturnType<typeof createModelClient>;
  delays: number[];
  warnings: { obj: object; msg: string }[];
} {
  const delays: number[] = [];
  const warnings: { obj: object; msg: string }[] = [];
  const model = createModelClient({
    apiKey: fake.apiKey,
    baseURL: fake.url,
    maxAttempts: 4,
    timeoutMs: 5000,
    sleep: async (ms) => {
      delays.push(ms);
    },
    logger: { warn: (obj, msg) => warnings.push({ obj, msg }) },
    ...overrides,
  });
  return { model, delays, warnings };
}

const params = (text = "hello"): Anthropic.MessageCreateParamsNonStreaming => ({
  model: MODEL,
  max_tokens: 256,
  system: "You are cairn.",
  messages: [{ role: "user", content: text }],
});

async function unavailable(p: Promise<unknown>): Promise<ModelUnavailableError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelUnavailableError);
  return err as ModelUnavailableError;
}

describe("createModelClient against the fake API", () => {
  it("returns a plain text reply and sends a Bearer key and the request body", async () => {
    fake.enqueue({ text: "Hi there!" });
    const { model } = client();

    const msg = await model.create(params("hello"), CALL);

    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.content).toEqual([{ type: "text", text: "Hi there!", citations: null }]);
    expect(msg.id).toMatch(/^msg_fake_\d+$/);
    expect(msg.model).toBe(MODEL);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBe(Math.ceil("Hi there!".length / 4));

    const req = fake.lastRequest();
    expect(req?.headers["authorization"]).toBe(`Bearer ${fake.apiKey}`);
    expect(req?.body.model).toBe(MODEL);
    expect(req?.body.max_tokens).toBe(256);
    expect(req?.body.messages).toEqual([{ role: "user", content: "hello" }]);
    expect(req && fake.systemText(req)).toBe("You are cairn.");
  });

  it("parses a tool_use reply", async () => {
    fake.enqueue({ text: "Let me look.", toolUse: [{ name: "search_memory", input: { query: "deploy", limit: 3 } }] });
    const { model } = client();

    const msg = await model.create({
      ...params("what do we know about deploys?"),
      system: [{ type: "text", text: "Part one." }, { type: "text", text: "Part two." }],
      tools: [{ name: "search_memory", description: "search", input_schema: { type: "object", properties: {} } }],
      tool_choice: { type: "auto" },
    }, CALL);

    expect(msg.stop_reason).toBe("tool_use");
    const [text, tool] = msg.content;
    expect(text).toMatchObject({ type: "text", text: "Let me look." });
    expect(tool?.type).toBe("tool_use");
    if (tool?.type !== "tool_use") throw new Error("expected tool_use");
    expect(tool.name).toBe("search_memory");
    expect(tool.input).toEqual({ query: "deploy", limit: 3 });
    expect(tool.id).toMatch(/^toolu_fake_\d+$/);

    const req = fake.lastRequest();
    expect(req?.body.tools?.map((t) => t.name)).toEqual(["search_memory"]);
    expect(req?.body.tool_choice).toEqual({ type: "auto" });
    expect(req && fake.systemText(req)).toBe("Part one.\nPart two.");
  });

  it("fails fast with ModelUnavailableError on a wrong key (401, no retry)", async () => {
    const { model, delays } = client({ apiKey: "sk-wrong" });

    const err = await unavailable(model.create(params(), CALL));

    expect(err.lastStatus).toBe(401);
    expect(err.attempts).toBe(1);
    expect(err.reason).toBe("not_retryable");
    expect(err.cause).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(delays).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    expect(fake.rejected.map((r) => r.status)).toEqual([401]);
  });

  it("retries 529 twice then succeeds: one result, three requests, two logged retries", async () => {
    fake.enqueue({ error: 529 }, { error: 529 }, { text: "finally" });
    const { model, delays, warnings } = client();

    const msg = await model.create(params(), CALL);

    expect(msg.content).toMatchObject([{ type: "text", text: "finally" }]);
    expect(fake.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(warnings.map((w) => w.msg)).toEqual(["model call failed; retrying", "model call failed; retrying"]);
    expect(warnings[0]?.obj).toMatchObject({ attempt: 1, status: 529 });
  });

  it("honours retry-after (seconds) and retry-after-ms beyond its own backoff ceiling, up to maxRetryAfterMs", async () => {
    fake.enqueue(
      { error: 429, retryAfter: 3 },
      { error: 429, retryAfter: 30 },
      { error: 429, retryAfterMs: 1234 },
      { error: 429, retryAfter: 600 },
      { text: "ok" },
    );
    const { model, delays } = client({ maxAttempts: 5, maxDelayMs: 8000, maxRetryAfterMs: 60_000, random: () => 0 });

    const msg = await model.create(params(), CALL);

    expect(msg.content).toMatchObject([{ type: "text", text: "ok" }]);
    expect(delays).toEqual([3000, 30_000, 1234, 60_000]);
    expect(fake.requests).toHaveLength(5);
  });

  it("spreads the retries of a rate limit: up to baseDelayMs of jitter on top of retry-after", async () => {
    fake.enqueue({ error: 429, retryAfter: 2 }, { text: "ok" });
    const { model, delays } = client({ baseDelayMs: 500, random: () => 0.5 });

    await model.create(params(), CALL);

    expect(delays).toEqual([2250]);
  });

  it("gives up after maxAttempts on a lasting 529", async () => {
    fake.failForever(529);
    const { model, delays, warnings } = client({ maxAttempts: 3 });

    const err = await unavailable(model.create(params(), CALL));

    expect(err.attempts).toBe(3);
    expect(err.lastStatus).toBe(529);
    expect(err.reason).toBe("exhausted");
    expect(err.cause).toBeInstanceOf(OverloadedError);
    expect(fake.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(warnings.at(-1)?.msg).toBe("model call failed; giving up");

    // Once the outage clears, the same client works again.
    fake.clearFailure();
    fake.enqueue({ text: "back" });
    await expect(model.create(params(), CALL)).resolves.toMatchObject({ content: [{ text: "back" }] });
  });

  it("does not retry a 400", async () => {
    fake.enqueue({ error: 400, message: "messages: bad" }, { text: "never sent" });
    const { model, delays } = client();

    const err = await unavailable(model.create(params(), CALL));

    expect(err.lastStatus).toBe(400);
    expect(err.attempts).toBe(1);
    expect(fake.requests).toHaveLength(1);
    expect(fake.pendingSteps()).toBe(1);
    expect(delays).toEqual([]);
  });

  it("retries 500 with capped, full-jitter exponential backoff", async () => {
    fake.enqueue({ error: 500 }, { error: 503 }, { error: 500 }, { error: 502 }, { text: "ok" });
    const { model, delays } = client({ maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300, random: () => 0.5 });

    await model.create(params(), CALL);

    // ceilings 100, 200, 400->300, 800->300; jitter 0.5 of each.
    expect(delays).toEqual([50, 100, 150, 150]);
  });

  it("retries an attempt that exceeds timeoutMs", async () => {
    fake.enqueue({ delayMs: 1000, then: { text: "too late" } }, { text: "on time" });
    const { model, warnings } = client({ timeoutMs: 200 });

    const started = Date.now();
    const msg = await model.create(params(), CALL);

    expect(msg.content).toMatchObject([{ type: "text", text: "on time" }]);
    expect(fake.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(warnings[0]?.obj).toMatchObject({ attempt: 1, status: undefined, err: expect.stringMatching(/APIConnectionTimeoutError/) });
  });

  it("passes a caller's abort through unchanged, without retrying", async () => {
    fake.enqueue({ delayMs: 1000, then: { text: "too late" } }, { text: "should not be used" });
    const { model } = client();
    const controller = new AbortController();
    // Aborted once the request is at the API (not after a fixed time, which a loaded machine may not reach).
    void fake.waitForRequests(1, 10_000).then(() => controller.abort());

    await expect(model.create(params(), { signal: controller.signal, ...CALL })).rejects.toBeInstanceOf(APIUserAbortError);
    expect(fake.requests).toHaveLength(1);
  });

  it("uses the default responder when the queue is empty, including dynamic replies", async () => {
    const { model } = client();
    await expect(model.create(params(), CALL)).resolves.toMatchObject({ content: [{ text: NO_SCRIPTED_REPLY }] });

    fake.setDefault((req) => {
      const last = req.body.messages.at(-1);
      return { text: `echo: ${typeof last?.content === "string" ? last.content : "?"}` };
    });
    fake.enqueue({ reply: (req) => ({ text: `scripted #${req.seq}` }) });
    await expect(model.create(params("a"), CALL)).resolves.toMatchObject({ content: [{ text: "scripted #2" }] });
    await expect(model.create(params("b"), CALL)).resolves.toMatchObject({ content: [{ text: "echo: b" }] });
    await expect(fake.waitForRequests(3, 100)).resolves.toHaveLength(3);
    await expect(fake.waitForRequests(4, 50)).rejects.toThrow(/expected 4 requests/);
  });
});

describe("ModelClient.stream against the fake API", () => {
  /** Runs `stream`, collecting the deltas it forwarded; `result` is the message or the error. */
  async function streamed(
    model: ReturnType<typeof createModelClient>,
    p = params(),
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ deltas: string[]; message?: Anthropic.Message; error?: unknown }> {
    const deltas: string[] = [];
    const result = await model.stream!(p, (d) => deltas.push(d), { ...CALL, ...opts }).then(
      (message) => ({ message }),
      (error: unknown) => ({ error }),
    );
    return { deltas, ...result };
  }

  it("forwards text deltas in order and resolves with the whole message, tool calls included", async () => {
    const text = "Let me check the deploy runbook for you.";
    fake.enqueue({ text, pieces: 6, toolUse: [{ name: "skill_view", input: { name: "deploy" } }] });
    const { model, delays } = client();

    const { deltas, message } = await streamed(model);

    expect(deltas.length).toBeGreaterThan(4);
    expect(deltas.join("")).toBe(text);
    expect(message?.stop_reason).toBe("tool_use");
    expect(message?.content[0]).toMatchObject({ type: "text", text });
    expect(message?.content[1]).toMatchObject({ type: "tool_use", name: "skill_view", input: { name: "deploy" } });
    expect(fake.lastRequest()?.body.stream).toBe(true);
    expect(delays).toEqual([]);
  });

  it("forwards deltas as they arrive, not all at the end", async () => {
    fake.enqueue({ text: "one two three four", pieces: 4, intervalMs: 80 });
    const { model } = client();
    const seenAt: number[] = [];
    const started = Date.now();

    const message = await model.stream!(params(), () => seenAt.push(Date.now() - started), CALL);

    expect(message.content).toMatchObject([{ type: "text", text: "one two three four" }]);
    expect(seenAt).toHaveLength(4);
    // The first delta came a whole interval before the last: the caller saw the answer grow.
    expect(seenAt.at(-1)! - seenAt[0]!).toBeGreaterThanOrEqual(3 * 80 - 30);
  });

  it("retries a 529 that comes before any text, then streams the answer once", async () => {
    fake.enqueue({ error: 529 }, { error: 529 }, { text: "after the retries" });
    const { model, delays, warnings } = client();

    const { deltas, message } = await streamed(model);

    expect(deltas.join("")).toBe("after the retries");
    expect(message?.content).toMatchObject([{ type: "text", text: "after the retries" }]);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
    expect(delays).toHaveLength(2);
    expect(warnings.map((w) => w.msg)).toEqual(["model call failed; retrying", "model call failed; retrying"]);
  });

  it.each(["error", "disconnect", "stall"] as const)("retries a stream that breaks (%s) before its first text delta", async (how) => {
    fake.enqueue({ streamThenFail: "", how }, { text: "second time lucky" });
    const { model, delays, warnings } = client({ timeoutMs: 300 });

    const { deltas, message, error } = await streamed(model);

    expect(error).toBeUndefined();
    expect(deltas.join("")).toBe("second time lucky");
    expect(message?.content).toMatchObject([{ type: "text", text: "second time lucky" }]);
    expect(fake.requests).toHaveLength(2);
    expect(delays).toHaveLength(1);
    if (how === "stall") expect(warnings[0]?.obj).toMatchObject({ err: expect.stringMatching(/APIConnectionTimeoutError/) });
  });

  it.each(["error", "disconnect", "stall"] as const)("never retries once text was forwarded: a stream that breaks (%s) mid-answer is final", async (how) => {
    fake.enqueue({ streamThenFail: "The answer starts like th", how, pieces: 2 }, { text: "must not be requested" });
    const { model, delays, warnings } = client({ timeoutMs: 300 });

    const { deltas, error } = await streamed(model);

    expect(error).toBeInstanceOf(ModelUnavailableError);
    const err = error as ModelUnavailableError;
    expect(err.reason).toBe("interrupted");
    expect(err.attempts).toBe(1);
    expect(err.message).toMatch(/broke off/);
    // What was shown stays shown once, and nothing was asked twice.
    expect(deltas.join("")).toBe("The answer starts like th");
    expect(fake.requests).toHaveLength(1);
    expect(fake.pendingSteps()).toBe(1);
    expect(delays).toEqual([]);
    expect(warnings.map((w) => w.msg)).toEqual(["model stream broke after text was forwarded; not retrying"]);
  });

  it("gives up after maxAttempts and fails fast on a 400, like create", async () => {
    fake.failForever(529);
    const { model, delays } = client({ maxAttempts: 3 });
    const exhausted = await streamed(model);
    expect(exhausted.error).toBeInstanceOf(ModelUnavailableError);
    expect(exhausted.error).toMatchObject({ reason: "exhausted", attempts: 3, lastStatus: 529 });
    expect(delays).toHaveLength(2);
    expect(exhausted.deltas).toEqual([]);

    fake.clearFailure();
    fake.enqueue({ error: 400, message: "messages: bad" }, { text: "never sent" });
    const bad = await streamed(model);
    expect(bad.error).toMatchObject({ reason: "not_retryable", attempts: 1, lastStatus: 400 });
    expect(fake.pendingSteps()).toBe(1);
  });

  it("passes a caller's abort through unchanged, before and after the first delta", async () => {
    const { model } = client();
    fake.enqueue({ delayMs: 1000, then: { text: "too late" } });
    const early = new AbortController();
    setTimeout(() => early.abort(), 50);
    expect((await streamed(model, params(), { signal: early.signal })).error).toBeInstanceOf(APIUserAbortError);

    fake.enqueue({ text: "a slow answer that is cut short", pieces: 3, intervalMs: 300 });
    const late = new AbortController();
    const deltas: string[] = [];
    const run = model.stream!(params(), (d) => {
      deltas.push(d);
      late.abort();
    }, { signal: late.signal, ...CALL });
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    expect(deltas).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("keeps streaming when the text listener throws", async () => {
    fake.enqueue({ text: "still complete", pieces: 3 });
    const { model, warnings } = client();
    let calls = 0;

    const message = await model.stream!(params(), () => {
      calls++;
      throw new Error("display bug");
    }, CALL);

    expect(message.content).toMatchObject([{ type: "text", text: "still complete" }]);
    expect(calls).toBe(3);
    expect(warnings.filter((w) => w.msg === "text listener failed; streaming on")).toHaveLength(3);
  });
});

describe("the fake's wire format", () => {
  it("streams text and tool_use through the raw SDK in the real SSE order", async () => {
    fake.enqueue({
      text: "Checking the runbook now.",
      toolUse: [{ name: "read_skill", input: { name: "deploy", sections: ["rollback", "canary"] } }],
    });
    const sdk = new Anthropic({ baseURL: fake.url, apiKey: fake.apiKey, maxRetries: 0 });

    const stream = sdk.messages.stream({ ...params(), max_tokens: 512 });
    const events: string[] = [];
    stream.on("streamEvent", (ev) => events.push(ev.type === "content_block_delta" ? `delta:${ev.delta.type}` : ev.type));
    const msg = await stream.finalMessage();

    expect(fake.lastRequest()?.body.stream).toBe(true);
    expect(msg.stop_reason).toBe("tool_use");
    expect(msg.content[0]).toMatchObject({ type: "text", text: "Checking the runbook now." });
    expect(msg.content[1]).toMatchObject({
      type: "tool_use",
      name: "read_skill",
      input: { name: "deploy", sections: ["rollback", "canary"] },
    });
    expect(msg.usage.output_tokens).toBeGreaterThan(1);
    // Deltas arrive in several chunks, so the SDK really had to accumulate them.
    const textDeltas = events.filter((e) => e === "delta:text_delta").length;
    const jsonDeltas = events.filter((e) => e === "delta:input_json_delta").length;
    expect(textDeltas).toBeGreaterThan(1);
    expect(jsonDeltas).toBeGreaterThan(1);
    expect(events).toEqual([
      "message_start",
      "content_block_start",
      ...Array<string>(textDeltas).fill("delta:text_delta"),
      "content_block_stop",
      "content_block_start",
      ...Array<string>(jsonDeltas).fill("delta:input_json_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("accepts x-api-key from a raw fetch, streams with a ping, and rejects bad keys and paths", async () => {
    const body = JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    fake.enqueue({ text: "raw ok" }, { text: "streamed" });

    const ok = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": fake.apiKey, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ type: "message", role: "assistant", content: [{ type: "text", text: "raw ok" }] });

    const sse = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": fake.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ ...(JSON.parse(body) as object), stream: true }),
    });
    expect(sse.headers.get("content-type")).toBe("text/event-stream");
    const names = [...(await sse.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"]);
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);

    const bad = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "nope", "content-type": "application/json" },
      body,
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });

    const missing = await fetch(`${fake.url}/v1/complete`, { method: "POST", headers: { "x-api-key": fake.apiKey }, body });
    expect(missing.status).toBe(404);

    expect(fake.requests).toHaveLength(2);
    expect(fake.rejected.map((r) => r.status)).toEqual([401, 404]);
  });
});

describe("isRetryable", () => {
  const statusError = (status: number): APIError =>
    APIError.generate(status, { type: "error", error: { type: "x", message: "m" } }, undefined, new Headers());

  it.each([408, 409, 429, 500, 502, 503, 504, 529])("retries status %i", (status) => {
    expect(isRetryable(statusError(status))).toBe(true);
  });

  it.each([400, 401, 403, 404, 413, 422])("does not retry status %i", (status) => {
    expect(isRetryable(statusError(status))).toBe(false);
  });

  it("retries connection errors and timeouts, not aborts or plain errors", () => {
    expect(isRetryable(new APIConnectionError({ message: "reset" }))).toBe(true);
    expect(isRetryable(new APIConnectionTimeoutError())).toBe(true);
    expect(isRetryable(new APIUserAbortError())).toBe(false);
    expect(isRetryable(new Error("bug"))).toBe(false);
    expect(isRetryable("string")).toBe(false);
  });
});
