/**
 * A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that the real SDK talks to.
 *
 * Why a server and not a mocked SDK: the things that break in production (auth headers, status
 * codes, retry-after headers, timeouts, SSE framing) live between the SDK and the wire, and a mock
 * of the SDK would skip exactly that layer. Tests script replies with `enqueue(...)`; every request
 * that reaches the "model" is recorded with its parsed body so tests can assert on what was sent.
 */
import http from "node:http";
import { z } from "zod";
import { flattenHeaders, listenLocal, readBody } from "./http.ts";
import { KEY_CHECK_PROMPT } from "../../src/agent/key-check.ts";

// ---------------------------------------------------------------------------------------------
// Request shape. Loose on purpose: the fake must accept whatever a valid SDK request carries
// (metadata, temperature, thinking, ...) while still rejecting bodies the real API would reject
// for a missing `model`/`max_tokens`/`messages`, so a broken request builder fails in tests too.
// ---------------------------------------------------------------------------------------------

const BlockSchema = z.looseObject({ type: z.string() });

const SystemSchema = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
]);

const MessageParamSchema = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(BlockSchema)]),
});

const ToolSchema = z.looseObject({ name: z.string() });

const ToolChoiceSchema = z.looseObject({ type: z.string(), name: z.string().optional() });

const MessagesBodySchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(MessageParamSchema).min(1),
  system: SystemSchema.optional(),
  tools: z.array(ToolSchema).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  stream: z.boolean().optional(),
});

export type MessagesBody = z.infer<typeof MessagesBodySchema>;

export interface RecordedRequest {
  /** 1-based order of arrival among accepted requests. */
  seq: number;
  method: string;
  path: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: MessagesBody;
}

/** A request the fake refused before it reached the script (bad path, bad key, invalid body). */
export interface RejectedRequest {
  method: string;
  path: string;
  status: number;
  reason: string;
  headers: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Script steps
// ---------------------------------------------------------------------------------------------

export interface ToolUseSpec {
  name: string;
  input: unknown;
  id?: string;
}

/** Statuses the fake can answer with; the brief's four plus the others the retry policy cares about. */
export type FakeErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 429 | 500 | 502 | 503 | 504 | 529;

/**
 * How a streamed reply's text arrives: in `pieces` deltas (default 3), `intervalMs` apart (default
 * 0: all at once). Ignored for non-streamed requests. Lets tests watch a slow answer grow.
 */
export interface StreamPace {
  pieces?: number;
  intervalMs?: number;
}

/**
 * How a stream breaks after its text: an SSE `error` event (overloaded_error, as the real API sends
 * mid-stream), the connection dropped, or silence with the connection held open.
 */
export type StreamFailure = "error" | "disconnect" | "stall";

/** Token counts a reply reports; unset ones are estimated from the request and reply (cache ones left out). */
export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export type Step =
  | ({ text: string; usage?: Partial<FakeUsage> } & StreamPace)
  | ({ toolUse: ToolUseSpec[]; text?: string; usage?: Partial<FakeUsage> } & StreamPace)
  /**
   * A streamed reply that breaks after sending `streamThenFail` as text deltas ("" breaks before any
   * text). A non-streamed request gets a plain 529 instead: the whole request failed.
   */
  | ({ streamThenFail: string; how?: StreamFailure } & StreamPace)
  | { error: FakeErrorStatus; message?: string; retryAfter?: number; retryAfterMs?: number }
  | { delayMs: number; then: Step }
  | { reply: (req: RecordedRequest) => Step | Promise<Step> };

export type Responder = (req: RecordedRequest) => Step | Promise<Step>;

export const NO_SCRIPTED_REPLY = "(fake: no scripted reply)";

export interface FakeAnthropic {
  /** Base URL without trailing slash; pass as `baseURL` to the SDK. */
  readonly url: string;
  readonly apiKey: string;
  /** Every request that passed routing, auth and validation, in arrival order (errors included). */
  readonly requests: RecordedRequest[];
  readonly rejected: RejectedRequest[];
  /**
   * cairn's start-up key checks (src/agent/key-check.ts): answered "ok" (or with `failForever`'s
   * error) without spending a scripted reply, and kept out of `requests`, so tests that spawn
   * `src/main.ts` script their turns as before.
   */
  readonly keyChecks: RecordedRequest[];
  enqueue(...steps: Step[]): void;
  /** Steps still waiting in the queue. */
  pendingSteps(): number;
  setDefault(responder: Responder | Step | null): void;
  failForever(status: FakeErrorStatus, message?: string): void;
  clearFailure(): void;
  lastRequest(): RecordedRequest | undefined;
  systemText(req: RecordedRequest): string;
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /**
   * Accepted requests whose response is still open (`now`), and the most at once since the last
   * reset (`max`): how many model calls the client really had in flight together.
   */
  concurrency(): { now: number; max: number };
  /** Forget requests, queue, default and failure (for a server shared across tests). */
  reset(): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<FakeErrorStatus, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  408: "timeout_error",
  409: "invalid_request_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  502: "api_error",
  503: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const DEFAULT_API_KEY = "sk-ant-fake-test-key";

export async function startFakeAnthropic(opts: { apiKey?: string } = {}): Promise<FakeAnthropic> {
  const apiKey = opts.apiKey ?? DEFAULT_API_KEY;
  const requests: RecordedRequest[] = [];
  const rejected: RejectedRequest[] = [];
  const keyChecks: RecordedRequest[] = [];
  const queue: Step[] = [];
  let defaultResponder: Responder | null = null;
  let failure: { status: FakeErrorStatus; message?: string } | null = null;
  let msgCounter = 0;
  let toolCounter = 0;
  let reqCounter = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const waiters = new Set<() => void>();
  // Delayed replies keep timers; close() must cancel them or the test process waits them out.
  const timers = new Set<NodeJS.Timeout>();

  const notify = (): void => {
    for (const w of [...waiters]) w();
  };

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      // A bug in the fake should surface as a loud 500, not a hung test.
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, errorBody("api_error", `fake crashed: ${String(err)}`));
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const headers = flattenHeaders(req.headers);
    const raw = await readBody(req);

    const reject = (status: number, type: string, reason: string): void => {
      rejected.push({ method, path, status, reason, headers });
      sendJson(res, status, errorBody(type, reason));
    };

    if (method !== "POST" || path !== "/v1/messages") {
      return reject(404, "not_found_error", `${method} ${path} not found`);
    }
    if (!isAuthorized(headers, apiKey)) {
      return reject(401, "authentication_error", "invalid x-api-key");
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return reject(400, "invalid_request_error", "body is not valid JSON");
    }
    const parsed = MessagesBodySchema.safeParse(json);
    if (!parsed.success) {
      return reject(400, "invalid_request_error", z.prettifyError(parsed.error));
    }

    if (parsed.data.max_tokens === 1 && lastUserText({ seq: 0, method, path, headers, body: parsed.data }) === KEY_CHECK_PROMPT) {
      const check: RecordedRequest = { seq: keyChecks.length + 1, method, path, headers, body: parsed.data };
      keyChecks.push(check);
      return respond(res, check, failure ? { error: failure.status } : { text: "ok" });
    }
    const recorded: RecordedRequest = { seq: ++reqCounter, method, path, headers, body: parsed.data };
    requests.push(recorded);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once("close", () => inFlight--);
    notify();

    // failForever wins over the queue so that an outage does not eat scripted replies meant for after it.
    const step: Step = failure
      ? { error: failure.status, ...(failure.message !== undefined ? { message: failure.message } : {}) }
      : (queue.shift() ?? (defaultResponder ? await defaultResponder(recorded) : { text: NO_SCRIPTED_REPLY }));
    await respond(res, recorded, step);
  }

  async function respond(res: http.ServerResponse, req: RecordedRequest, step: Step): Promise<void> {
    if ("reply" in step) {
      return respond(res, req, await step.reply(req));
    }
    if ("delayMs" in step) {
      const stillOpen = await waitUnlessClosed(res, step.delayMs);
      // The client gave up (timeout/abort): writing now would only raise EPIPE noise.
      if (!stillOpen) return;
      return respond(res, req, step.then);
    }
    if ("error" in step) {
      const extra: Record<string, string> = {};
      if (step.retryAfter !== undefined) extra["retry-after"] = String(step.retryAfter);
      if (step.retryAfterMs !== undefined) extra["retry-after-ms"] = String(step.retryAfterMs);
      const type = ERROR_TYPES[step.error];
      sendJson(res, step.error, errorBody(type, step.message ?? `fake ${type}`), extra);
      return;
    }
    if ("streamThenFail" in step) {
      if (req.body.stream !== true) {
        sendJson(res, 529, errorBody(ERROR_TYPES[529], "fake overloaded_error"));
        return;
      }
      const message = buildMessage(req, { text: step.streamThenFail });
      await writeSse(res, message, step, (ms) => waitUnlessClosed(res, ms), step.how ?? "error");
      return;
    }
    const message = buildMessage(req, step);
    if (req.body.stream === true) {
      await writeSse(res, message, step, (ms) => waitUnlessClosed(res, ms));
    } else {
      sendJson(res, 200, message);
    }
  }

  function buildMessage(req: RecordedRequest, step: ({ text: string } | { toolUse: ToolUseSpec[]; text?: string }) & { usage?: Partial<FakeUsage> }): FakeMessage {
    const content: FakeBlock[] = [];
    if (step.text !== undefined) content.push({ type: "text", text: step.text, citations: null });
    if ("toolUse" in step) {
      for (const t of step.toolUse) {
        content.push({
          type: "tool_use",
          id: t.id ?? `toolu_fake_${++toolCounter}`,
          name: t.name,
          input: t.input,
          // SDK 1.x types every tool_use block with a caller; client tools are called "direct".
          caller: { type: "direct" },
        });
      }
    }
    const outputChars = content.reduce((n, b) => n + (b.type === "text" ? b.text.length : JSON.stringify(b.input).length), 0);
    return {
      id: `msg_fake_${++msgCounter}`,
      type: "message",
      role: "assistant",
      model: req.body.model,
      content,
      stop_reason: "toolUse" in step ? "tool_use" : "end_turn",
      stop_sequence: null,
      // Present (as null) because SDK 1.x's `Message` type declares them required.
      stop_details: null,
      container: null,
      usage: {
        input_tokens: Math.max(1, Math.ceil((JSON.stringify(req.body.system ?? "") + JSON.stringify(req.body.messages)).length / 4)),
        output_tokens: Math.max(1, Math.ceil(outputChars / 4)),
        ...step.usage,
      },
    };
  }

  function waitUnlessClosed(res: http.ServerResponse, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        timers.delete(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        timers.delete(timer);
        res.off("close", onClose);
        resolve(!res.destroyed);
      }, ms);
      timers.add(timer);
      res.once("close", onClose);
    });
  }

  const port = await listenLocal(server);

  const toResponder = (r: Responder | Step): Responder => (typeof r === "function" ? r : () => r);

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    rejected,
    keyChecks,
    enqueue: (...steps) => {
      queue.push(...steps);
    },
    pendingSteps: () => queue.length,
    setDefault: (r) => {
      defaultResponder = r === null ? null : toResponder(r);
    },
    failForever: (status, message) => {
      failure = message !== undefined ? { status, message } : { status };
    },
    clearFailure: () => {
      failure = null;
    },
    concurrency: () => ({ now: inFlight, max: maxInFlight }),
    lastRequest: () => requests.at(-1),
    systemText,
    waitForRequests: (n, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        if (requests.length >= n) return resolve([...requests]);
        const check = (): void => {
          if (requests.length >= n) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve([...requests]);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake anthropic: expected ${n} requests within ${timeoutMs}ms, saw ${requests.length}`));
        }, timeoutMs);
        waiters.add(check);
      }),
    reset: () => {
      requests.length = 0;
      rejected.length = 0;
      keyChecks.length = 0;
      reqCounter = 0;
      maxInFlight = inFlight;
      queue.length = 0;
      defaultResponder = null;
      failure = null;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      // Keep-alive sockets from the SDK's fetch would otherwise hold server.close() open.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The system prompt as one string, whether it was sent as a string or as text blocks. */
export function systemText(req: RecordedRequest): string {
  const sys = req.body.system;
  if (sys === undefined) return "";
  if (typeof sys === "string") return sys;
  return sys.map((b) => (b.type === "text" && b.text !== undefined ? b.text : "")).join("\n");
}

/** The last user message as text: its string, or its text blocks joined (tool results have none). */
export function lastUserText(req: RecordedRequest): string {
  const last = req.body.messages.findLast((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
}

/**
 * A default responder that says which post it answers: the last match of `pattern` in the last
 * user message (the post of the turn: earlier ones, and a thread's context block, come before it),
 * given to `reply`, after `delayMs` (a model's latency). Tests match replies to posts with it.
 */
export function echoToken(pattern: RegExp, reply: (token: string | null) => string, delayMs = 0): Responder {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  return (req) => {
    const token = [...lastUserText(req).matchAll(global)].at(-1)?.[0] ?? null;
    const text = reply(token);
    return delayMs > 0 ? { delayMs, then: { text } } : { text };
  };
}

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

type FakeBlock =
  | { type: "text"; text: string; citations: null }
  | { type: "tool_use"; id: string; name: string; input: unknown; caller: { type: "direct" } };

interface FakeMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: FakeBlock[];
  stop_reason: "end_turn" | "tool_use";
  stop_sequence: null;
  stop_details: null;
  container: null;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

function isAuthorized(headers: Record<string, string>, apiKey: string): boolean {
  // Accept both schemes: SDK 1.x sends a Bearer token, 0.x and raw curl users send x-api-key.
  if (headers["x-api-key"] === apiKey) return true;
  return headers["authorization"] === `Bearer ${apiKey}`;
}

function errorBody(type: string, message: string): object {
  return { type: "error", error: { type, message } };
}

let fakeRequestIds = 0;

function sendJson(res: http.ServerResponse, status: number, body: object, extraHeaders: Record<string, string> = {}): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "request-id": `req_fake_${++fakeRequestIds}`,
    ...extraHeaders,
  });
  res.end(text);
}

/** Split a string into at most `parts` non-empty pieces, so deltas really arrive in several chunks. */
function chunk(s: string, parts = 3): string[] {
  if (s.length === 0) return [""];
  const size = Math.max(1, Math.ceil(s.length / parts));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/**
 * Writes `message` as the real API's SSE sequence. With `failure`, the stream breaks right after the
 * text deltas of the first block (no content_block_stop, no message_stop), the way an overloaded
 * API or a dropped connection cuts an answer short. `wait` resolves false once the client has gone.
 */
async function writeSse(
  res: http.ServerResponse,
  message: FakeMessage,
  pace: StreamPace,
  wait: (ms: number) => Promise<boolean>,
  failure?: StreamFailure,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": `req_fake_${++fakeRequestIds}`,
  });
  const send = (event: string, data: object): void => {
    // The client may hang up between paced deltas; writing then would only raise EPIPE noise.
    if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };

  // The real API opens with an empty message and only a provisional output count.
  send("message_start", {
    type: "message_start",
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  send("ping", { type: "ping" });
  for (const [index, block] of message.content.entries()) {
    if (block.type === "text") {
      send("content_block_start", { type: "content_block_start", index, content_block: { ...block, text: "" } });
      for (const [i, piece] of chunk(block.text, pace.pieces).entries()) {
        if (i > 0 && pace.intervalMs && !(await wait(pace.intervalMs))) return;
        // An empty text (a failure before any text) sends no delta at all.
        if (piece) send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
      }
      if (failure) {
        if (failure === "error") {
          send("error", errorBody("overloaded_error", "fake overloaded mid-stream"));
          res.end();
        } else if (failure === "disconnect") {
          // end(), not destroy(): the deltas already written reach the client, then the connection
          // closes without the chunked body's terminator, as a dropped connection looks.
          res.socket?.end();
        }
        // "stall": nothing more is written; the connection stays open until the client gives up.
        return;
      }
    } else {
      // Tool input arrives as JSON text fragments; the block starts with an empty input object.
      send("content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } });
      for (const piece of chunk(JSON.stringify(block.input))) {
        send("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        });
      }
    }
    send("content_block_stop", { type: "content_block_stop", index });
  }
  send("message_delta", {
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null, stop_details: null, container: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  send("message_stop", { type: "message_stop" });
  res.end();
}
