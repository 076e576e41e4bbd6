/**
 * The agent's one door to Claude. It wraps the SDK so that retries are ours: the SDK is built with
 * `maxRetries: 0`, and this module decides what to retry, how long to wait (logged, bounded, and
 * testable through an injected `sleep`), and turns every final failure into one error type,
 * `ModelUnavailableError`, that the caller can answer with a polite apology.
 */
import Anthropic, { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, AuthenticationError, PermissionDeniedError } from "@anthropic-ai/sdk";

/**
 * What a call is for besides its request: `workspaceId` is the workspace it serves, whose tokens it
 * counts in (ops/usage-ledger.ts; "" for none, as a start-up check). Required, so that the compiler
 * finds every call that would go uncounted; passed down, not carried in an async context, because
 * Node 20's AsyncLocalStorage runs a hook on every promise the process makes.
 */
export interface ModelCall {
  workspaceId: string;
  signal?: AbortSignal | undefined;
}

export interface ModelClient {
  create(params: Anthropic.MessageCreateParamsNonStreaming, call: ModelCall): Promise<Anthropic.Message>;
  /**
   * The same call, streamed: `onText` gets each text delta as it arrives, in order, and the promise
   * resolves with the whole message (tool calls included). Retried like `create`, but only until the
   * first delta has been handed out: after that a failure is final (`ModelUnavailableError`, reason
   * `interrupted`), because a retry would stream the answer again from its start and whoever shows
   * the text would show it twice. Optional so that a client without streaming (a benchmark's
   * in-process model) still fits; callers fall back to `create`.
   */
  stream?(
    params: Anthropic.MessageCreateParamsNonStreaming,
    onText: (delta: string) => void,
    call: ModelCall,
  ): Promise<Anthropic.Message>;
}

export interface ModelClientConfig {
  apiKey: string;
  baseURL?: string;
  /** Per attempt, not overall: a hung attempt is abandoned and (being a timeout) retried. */
  timeoutMs?: number;
  /** Total tries including the first. */
  maxAttempts?: number;
  baseDelayMs?: number;
  /** The longest backoff of our own (no retry-after from the server). */
  maxDelayMs?: number;
  /**
   * The longest server-requested wait (retry-after) honoured. Longer than `maxDelayMs`: retrying
   * before the server's window reopens only spends an attempt on another 429.
   */
  maxRetryAfterMs?: number;
  logger?: { warn(obj: object, msg: string): void };
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1); injectable so backoff is deterministic in tests. */
  random?: () => number;
}

export const MODEL_DEFAULTS = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
  timeoutMs: 60_000,
} as const;

/**
 * `exhausted`: a transient failure persisted; `not_retryable`: retrying could not help (auth, bad
 * request); `interrupted`: a stream broke after some of its text was already handed out.
 */
export type ModelUnavailableReason = "exhausted" | "not_retryable" | "interrupted";

const REASON_TEXT: Record<ModelUnavailableReason, string> = {
  exhausted: "model unavailable after {n} attempt(s)",
  not_retryable: "model request failed and is not retryable",
  interrupted: "model stream broke off after text was shown (attempt {n}); not retried",
};

/** The model could not be reached (or refused the request); `cause` holds the last SDK error. */
export class ModelUnavailableError extends Error {
  override readonly name = "ModelUnavailableError";
  readonly attempts: number;
  readonly lastStatus?: number;
  readonly reason: ModelUnavailableReason;
  override readonly cause: unknown;

  constructor(args: { attempts: number; lastStatus?: number | undefined; reason: ModelUnavailableReason; cause: unknown }) {
    const status = args.lastStatus !== undefined ? ` (last status ${args.lastStatus})` : "";
    super(REASON_TEXT[args.reason].replace("{n}", String(args.attempts)) + status, { cause: args.cause });
    this.attempts = args.attempts;
    if (args.lastStatus !== undefined) this.lastStatus = args.lastStatus;
    this.reason = args.reason;
    this.cause = args.cause;
  }
}

/**
 * The API refused the key itself (401, 403): no wait fixes that, only an admin changing
 * ANTHROPIC_API_KEY, so callers say so instead of apologising for an outage.
 */
export function isKeyRefused(err: unknown): boolean {
  const cause = err instanceof ModelUnavailableError ? err.cause : err;
  return cause instanceof AuthenticationError || cause instanceof PermissionDeniedError;
}

/** Error-body types that mean "try again later" even when no HTTP status is attached (mid-stream errors). */
const TRANSIENT_ERROR_TYPES = new Set(["overloaded_error", "rate_limit_error", "api_error", "timeout_error"]);

/**
 * Whether another attempt could succeed. 4xx other than 408/409/429 are the request's own fault
 * (bad key, bad body, too large), so repeating them only burns quota and delays the apology.
 */
export function isRetryable(err: unknown): boolean {
  // The caller cancelled; retrying would override their decision.
  if (err instanceof APIUserAbortError) return false;
  // Includes APIConnectionTimeoutError: the request may never have reached the API.
  if (err instanceof APIConnectionError) return true;
  if (err instanceof APIError) {
    const status = err.status;
    if (status === undefined) return err.type !== null && TRANSIENT_ERROR_TYPES.has(err.type);
    return status === 408 || status === 409 || status === 429 || status >= 500;
  }
  return false;
}

/**
 * A stream that broke while its body was read: the SDK wraps the fetch error ("terminated") or a
 * body that ended without a message in a plain `AnthropicError`, with no status. That is a network
 * failure, as retryable as a refused connection. Only the streaming path asks this.
 */
export function isBrokenStream(err: unknown): boolean {
  return err instanceof AnthropicError && !(err instanceof APIError);
}

/**
 * The server's requested wait in ms, from `retry-after-ms` (preferred: finer-grained) or
 * `retry-after` (seconds or an HTTP date); undefined when absent or unusable.
 */
export function retryAfterMs(err: unknown, now: number = Date.now()): number | undefined {
  if (!(err instanceof APIError) || !(err.headers instanceof Headers)) return undefined;
  const ms = err.headers.get("retry-after-ms");
  if (ms !== null) {
    const n = Number.parseFloat(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = err.headers.get("retry-after");
  if (ra !== null) {
    const secs = Number.parseFloat(ra);
    if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
    const date = Date.parse(ra);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** Full-jitter exponential backoff: uniform in [0, min(max, base * 2^(attempt-1))). */
export function backoffDelayMs(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

function statusOf(err: unknown): number | undefined {
  return err instanceof APIError && typeof err.status === "number" ? err.status : undefined;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sleep, but wake early with an abort error if the caller cancels while we back off. */
async function sleepUnlessAborted(sleep: (ms: number) => Promise<void>, ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return sleep(ms);
  if (signal.aborted) throw new APIUserAbortError();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new APIUserAbortError());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

export function createModelClient(cfg: ModelClientConfig): ModelClient {
  const maxAttempts = Math.max(1, Math.floor(cfg.maxAttempts ?? MODEL_DEFAULTS.maxAttempts));
  const baseDelayMs = Math.max(0, cfg.baseDelayMs ?? MODEL_DEFAULTS.baseDelayMs);
  const maxDelayMs = Math.max(0, cfg.maxDelayMs ?? MODEL_DEFAULTS.maxDelayMs);
  const maxRetryAfterMs = Math.max(0, cfg.maxRetryAfterMs ?? MODEL_DEFAULTS.maxRetryAfterMs);
  const timeoutMs = cfg.timeoutMs ?? MODEL_DEFAULTS.timeoutMs;
  const sleep = cfg.sleep ?? defaultSleep;
  const random = cfg.random ?? Math.random;

  const sdk = new Anthropic({
    apiKey: cfg.apiKey,
    ...(cfg.baseURL !== undefined ? { baseURL: cfg.baseURL } : {}),
    // Zero: the SDK's own retries would be invisible to our logs and multiply with ours.
    maxRetries: 0,
    timeout: timeoutMs,
  });

  /**
   * The retry policy, shared by `create` and `stream`: throws the final `ModelUnavailableError`, or
   * logs the failure and returns how long to wait before the next attempt.
   */
  const nextDelay = (err: unknown, attempt: number, retryable = isRetryable(err)): number => {
    const status = statusOf(err);
    const requestId = err instanceof APIError ? err.requestID : undefined;
    if (!retryable) {
      throw new ModelUnavailableError({ attempts: attempt, lastStatus: status, reason: "not_retryable", cause: err });
    }
    if (attempt >= maxAttempts) {
      cfg.logger?.warn({ attempt, maxAttempts, status, requestId, err: describe(err) }, "model call failed; giving up");
      throw new ModelUnavailableError({ attempts: attempt, lastStatus: status, reason: "exhausted", cause: err });
    }
    const hinted = retryAfterMs(err);
    // The server's wait, plus a little jitter: the many turns a rate limit stops at once (up to
    // CAIRN_MAX_CONCURRENCY) come back spread out rather than in one burst that is refused again.
    const delayMs = hinted !== undefined ? Math.min(hinted, maxRetryAfterMs) + Math.floor(random() * baseDelayMs) : backoffDelayMs(attempt, baseDelayMs, maxDelayMs, random);
    cfg.logger?.warn(
      { attempt, maxAttempts, status, requestId, delayMs, retryAfter: hinted !== undefined, err: describe(err) },
      "model call failed; retrying",
    );
    return delayMs;
  };

  /**
   * One streamed attempt. The SDK's `timeout` only covers the wait for the response headers; a
   * stream that then goes silent would hold the turn forever, so a watchdog aborts it after
   * `timeoutMs` without an event and the attempt fails as a timeout (retryable like any other).
   */
  const streamOnce = async (
    params: Anthropic.MessageCreateParamsNonStreaming,
    onDelta: (delta: string) => void,
    signal: AbortSignal | undefined,
  ): Promise<Anthropic.Message> => {
    if (signal?.aborted) throw new APIUserAbortError();
    // Our own controller, so the watchdog can stop the stream without touching the caller's signal.
    const controller = new AbortController();
    const relay = (): void => controller.abort();
    signal?.addEventListener("abort", relay, { once: true });
    let stalled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, timeoutMs);
    };
    const stream = sdk.messages.stream(params, { signal: controller.signal });
    // Asked for at once: a stream that fails before anyone awaits it would be an unhandled rejection.
    const final = stream.finalMessage();
    stream.on("connect", arm);
    stream.on("streamEvent", arm);
    stream.on("text", (delta) => {
      if (delta) onDelta(delta);
    });
    try {
      return await final;
    } catch (err) {
      if (stalled && !signal?.aborted) throw new APIConnectionTimeoutError({ message: `no stream event for ${timeoutMs} ms` });
      throw err;
    } finally {
      clearTimeout(watchdog);
      signal?.removeEventListener("abort", relay);
    }
  };

  return {
    async create(params, { signal }) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await sdk.messages.create(params, signal ? { signal } : {});
        } catch (err) {
          // A cancellation is the caller's own doing, not an outage: let it through unchanged.
          if (err instanceof APIUserAbortError) throw err;
          await sleepUnlessAborted(sleep, nextDelay(err, attempt), signal);
        }
      }
    },

    async stream(params, onText, { signal }) {
      let forwarded = false;
      const onDelta = (delta: string): void => {
        forwarded = true;
        try {
          onText(delta);
        } catch (err) {
          // A display hiccup in the listener must not cost the answer itself.
          cfg.logger?.warn({ err: describe(err) }, "text listener failed; streaming on");
        }
      };
      for (let attempt = 1; ; attempt++) {
        try {
          return await streamOnce(params, onDelta, signal);
        } catch (err) {
          if (err instanceof APIUserAbortError) throw err;
          if (forwarded) {
            const status = statusOf(err);
            cfg.logger?.warn({ attempt, status, err: describe(err) }, "model stream broke after text was forwarded; not retrying");
            throw new ModelUnavailableError({ attempts: attempt, lastStatus: status, reason: "interrupted", cause: err });
          }
          await sleepUnlessAborted(sleep, nextDelay(err, attempt, isRetryable(err) || isBrokenStream(err)), signal);
        }
      }
    },
  };
}

/** A short, log-safe description: the SDK error objects carry headers we do not want in logs. */
function describe(err: unknown): string {
  if (err instanceof Error) return `${err.constructor.name}: ${err.message}`;
  return String(err);
}
