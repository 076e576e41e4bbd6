/**
 * What cairn counts, in Prometheus terms (served as `GET /metrics`, see health.ts and
 * docs/operations.md). One `Metrics` owns one prom-client registry, never the library's global
 * one: a test process runs several cores, and each must count only what happened to it.
 *
 * The code calls typed methods (`turn`, `modelCall`, `toolCall`, `error`, `job`); gauges that
 * describe the present (the job queue, conversations under way) are read when scraped, from the
 * sources a core hands to `watch`.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** How a message given to the core ended: the reply's status, or why it was not a turn. */
export const TURN_OUTCOMES = ["ok", "failed", "refused", "limited", "command", "dropped_duplicate", "dropped_bot", "dropped_empty", "dropped_taken_over", "error"] as const;
export type TurnOutcome = (typeof TURN_OUTCOMES)[number];

/**
 * What went wrong, by where: a model call that failed for good, a turn that failed for another
 * reason (a bug, the database), a tool that threw unexpectedly, a job attempt that failed, a reply
 * the platform refused; `unhandled`, a promise rejection nothing handled (a library's event
 * handler), logged and survived.
 */
export const ERROR_KINDS = ["model", "turn", "tool", "job", "delivery", "unhandled"] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** `ok`, or why the call failed (the model client's reasons; `aborted`: the caller cancelled). */
export type ModelCallResult = "ok" | "exhausted" | "not_retryable" | "interrupted" | "aborted" | "error";

/** A tool call: run, refused by the tool (a message the model can act on), bad arguments or an unknown tool, or an unexpected failure. */
export type ToolResult = "ok" | "refused" | "invalid" | "failed";

/** A job attempt: done, failed and queued again, failed for good, or its lease was lost (another worker runs it). */
export type JobResult = "done" | "retry" | "failed" | "lost";

/** A memory provider's call (src/providers/): answered, past the deadline, threw or answered nonsense; `blocked`: one item the scanner refused. */
export type ProviderResult = "ok" | "late" | "failed" | "blocked";
/** An embeddings request: the backfill's batches, or a search's query. */
export type EmbeddingPurpose = "backfill" | "search" | "lessons";
export type EmbeddingResult = "ok" | "late" | "failed" | "skipped";

/** Token counts as the Messages API reports them (cache fields are null when caching was not used). */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export interface ModelCall {
  /** What the call was for: turn, summary, review, lesson, curator, report, command. */
  purpose: string;
  /** The model asked for. */
  model: string;
  /** Wall time of the whole call, retries included. */
  seconds: number;
  /** Null when the call failed. */
  usage: ModelUsage | null;
  result: ModelCallResult;
  /** The workspace the call served ("" outside any): the usage ledger counts it there. */
  workspaceId?: string;
}

export interface QueueDepth {
  kind: string;
  status: string;
  count: number;
}

/** Read at scrape time. */
export interface MetricsSources {
  /** Jobs waiting or running, by kind and status (the Job table: every process's, not only this one's). */
  jobQueue?: () => Promise<readonly QueueDepth[]>;
  /** Conversations with a turn queued or running in this process. */
  openConversations?: () => number;
  /** The inbound journal: events kept and not yet stored, and when the oldest was kept (ms since the epoch). */
  journal?: () => { depth: number; oldestAt: number | null };
  /** Texts with no vector yet in the current space (null: not counted yet, or embeddings off). */
  embeddingBacklog?: () => { messages: number; entries: number } | null;
}

export interface MetricsOptions {
  /**
   * Node's process metrics (CPU, memory, event loop lag, GC; prefixed `cairn_`). Default true. They
   * install observers that cannot be removed, so what makes many short-lived cores (tests, scripts)
   * turns them off.
   */
  processMetrics?: boolean;
}

/** Model calls last from under a second to minutes (long answers, retries with backoff). */
const MODEL_BUCKETS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];
/** A turn is one or more model calls plus tools and storage. */
const TURN_BUCKETS = [0.05, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];

/** An acknowledgement is due within Slack's 3 s; it waits for the journal's write only. */
const ACK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5];

const TOKEN_TYPES = ["input", "cache_read", "cache_write", "output"] as const;

/** A scrape waits this long for the job table; Prometheus' own default timeout is 10 s. */
const SOURCE_TIMEOUT_MS = 2_000;

/** The rows, or none when the read fails or hangs: a scrape during a database outage still serves everything else. */
async function readOrNone(read: () => Promise<readonly QueueDepth[]>): Promise<readonly QueueDepth[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<readonly QueueDepth[]>((resolve) => {
    timer = setTimeout(() => resolve([]), SOURCE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([read().catch(() => []), late]);
  } finally {
    clearTimeout(timer);
  }
}

export class Metrics {
  readonly registry = new Registry();
  private sources: MetricsSources = {};
  private readonly modelListeners: ((call: ModelCall) => void)[] = [];

  private readonly turns: Counter<"outcome">;
  private readonly turnSeconds: Histogram<"outcome">;
  private readonly modelCalls: Counter<"purpose" | "model" | "result">;
  private readonly modelSeconds: Histogram<"purpose" | "model" | "result">;
  private readonly modelTokens: Counter<"purpose" | "model" | "type">;
  private readonly toolCalls: Counter<"tool" | "result">;
  private readonly errors: Counter<"kind">;
  private readonly jobs: Counter<"kind" | "result">;
  private readonly providerCalls: Counter<"provider" | "call" | "result">;
  private readonly journalReplays: Counter<"platform">;
  private readonly embeddingCalls: Counter<"purpose" | "result">;
  private readonly embeddingSeconds: Histogram<"purpose">;
  private readonly embeddedTexts: Counter;
  private readonly journalGivenUp: Counter<"platform">;
  private readonly ackSeconds: Histogram<"platform">;

  constructor(opts: MetricsOptions = {}) {
    const registers = [this.registry];
    this.turns = new Counter({ name: "cairn_turns_total", help: "Messages given to the core, by how they ended.", labelNames: ["outcome"], registers });
    this.turnSeconds = new Histogram({
      name: "cairn_turn_duration_seconds",
      help: "Time from a message reaching the core to its reply being stored, by outcome (queueing included).",
      labelNames: ["outcome"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.modelCalls = new Counter({ name: "cairn_model_calls_total", help: "Model calls (each with its retries), by purpose, model and result.", labelNames: ["purpose", "model", "result"], registers });
    this.modelSeconds = new Histogram({
      name: "cairn_model_call_duration_seconds",
      help: "Model call latency, retries and backoff included, by purpose, model and result.",
      labelNames: ["purpose", "model", "result"],
      buckets: MODEL_BUCKETS,
      registers,
    });
    this.modelTokens = new Counter({
      name: "cairn_model_tokens_total",
      help: "Tokens of successful model calls, by purpose, model and type (input, cache_read, cache_write, output).",
      labelNames: ["purpose", "model", "type"],
      registers,
    });
    this.toolCalls = new Counter({ name: "cairn_tool_calls_total", help: "Tool calls the model made, by tool and result.", labelNames: ["tool", "result"], registers });
    this.errors = new Counter({ name: "cairn_errors_total", help: "Errors, by kind (model, turn, tool, job, delivery, unhandled).", labelNames: ["kind"], registers });
    this.jobs = new Counter({ name: "cairn_jobs_total", help: "Background job attempts, by kind and result (done, retry, failed, lost).", labelNames: ["kind", "result"], registers });
    this.providerCalls = new Counter({
      name: "cairn_provider_calls_total",
      help: "Memory provider calls, by provider, call (prefetch, sync, forget) and result (ok, late, failed; blocked: an item the scanner refused).",
      labelNames: ["provider", "call", "result"],
      registers,
    });
    this.embeddingCalls = new Counter({
      name: "cairn_embedding_calls_total",
      help: "Requests to the embeddings endpoint, by purpose (backfill; search: session_search's words; lessons: a message's, for lesson recall) and result (ok, failed; late: past the deadline, words alone; skipped: not asked, the endpoint resting after failures).",
      labelNames: ["purpose", "result"],
      registers,
    });
    this.embeddingSeconds = new Histogram({
      name: "cairn_embedding_call_duration_seconds",
      help: "Embeddings request latency, by purpose (backfill, search, lessons).",
      labelNames: ["purpose"],
      buckets: ACK_BUCKETS,
      registers,
    });
    this.embeddedTexts = new Counter({ name: "cairn_embedded_texts_total", help: "Texts embedded (messages, memory entries, queries).", registers });
    this.journalReplays = new Counter({
      name: "cairn_journal_replays_total",
      help: "Kept events handed to their platform's handler again: left by an earlier process, or after storage failed.",
      labelNames: ["platform"],
      registers,
    });
    this.journalGivenUp = new Counter({ name: "cairn_journal_given_up_total", help: "Kept events given up: storage answered and still could not store them.", labelNames: ["platform"], registers });
    this.ackSeconds = new Histogram({
      name: "cairn_ack_duration_seconds",
      help: "Time from a platform's event arriving to its acknowledgement (Slack: the HTTP response or Socket Mode ack).",
      labelNames: ["platform"],
      buckets: ACK_BUCKETS,
      registers,
    });
    // The bounded label sets start at zero, so a rate is defined before the first of each happens.
    for (const outcome of TURN_OUTCOMES) this.turns.inc({ outcome }, 0);
    for (const kind of ERROR_KINDS) this.errors.inc({ kind }, 0);

    const sources = (): MetricsSources => this.sources;
    new Gauge({
      name: "cairn_job_queue_depth",
      help: "Jobs queued or running, by kind and status, across every process sharing the database (absent while the database cannot be read).",
      labelNames: ["kind", "status"],
      registers,
      async collect() {
        this.reset();
        const read = sources().jobQueue;
        if (!read) return;
        // /readyz names a database outage; here the gauge is only left out.
        const rows = await readOrNone(read);
        for (const row of rows) this.set({ kind: row.kind, status: row.status }, row.count);
      },
    });
    new Gauge({
      name: "cairn_open_conversations",
      help: "Conversations with a turn queued or running in this process.",
      registers,
      collect() {
        this.set(sources().openConversations?.() ?? 0);
      },
    });
    new Gauge({
      name: "cairn_journal_depth",
      help: "Events kept in the inbound journal whose messages are not stored yet (waiting for storage, or in hand).",
      registers,
      collect() {
        this.set(sources().journal?.().depth ?? 0);
      },
    });
    new Gauge({
      name: "cairn_journal_oldest_age_seconds",
      help: "Age of the oldest event in the inbound journal (0 when it is empty).",
      registers,
      collect() {
        const oldest = sources().journal?.().oldestAt ?? null;
        this.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
      },
    });
    new Gauge({
      name: "cairn_embedding_backlog",
      help: "Messages and memory entries with no vector yet in the current embedding space, by kind (absent while embeddings are off).",
      labelNames: ["kind"],
      registers,
      collect() {
        this.reset();
        const b = sources().embeddingBacklog?.() ?? null;
        if (!b) return;
        this.set({ kind: "messages" }, b.messages);
        this.set({ kind: "entries" }, b.entries);
      },
    });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "cairn_" });
  }

  /** Where the scrape-time gauges read from (a core calls this once; a later call replaces the sources). */
  watch(sources: MetricsSources): void {
    this.sources = { ...sources };
  }

  turn(outcome: TurnOutcome, seconds?: number): void {
    this.turns.inc({ outcome });
    if (seconds !== undefined) this.turnSeconds.observe({ outcome }, seconds);
  }

  /** Also tells `listener` of every model call (the usage ledger keeps them per workspace). */
  onModelCall(listener: (call: ModelCall) => void): void {
    this.modelListeners.push(listener);
  }

  modelCall(call: ModelCall): void {
    for (const l of this.modelListeners) l(call);
    const labels = { purpose: call.purpose, model: call.model, result: call.result };
    this.modelCalls.inc(labels);
    this.modelSeconds.observe(labels, call.seconds);
    if (call.result !== "ok" && call.result !== "aborted") this.error("model");
    if (!call.usage) return;
    const u = call.usage;
    const counts: Record<(typeof TOKEN_TYPES)[number], number> = {
      input: u.input_tokens,
      cache_read: u.cache_read_input_tokens ?? 0,
      cache_write: u.cache_creation_input_tokens ?? 0,
      output: u.output_tokens,
    };
    for (const type of TOKEN_TYPES) {
      const n = counts[type];
      // Only real counts: a negative or fractional value from a proxy would corrupt the counter.
      if (Number.isFinite(n) && n > 0) this.modelTokens.inc({ purpose: call.purpose, model: call.model, type }, Math.floor(n));
    }
  }

  /** One embeddings request; `seconds` and `texts` when it answered or failed (a late or skipped query has neither). */
  embeddingCall(purpose: EmbeddingPurpose, result: EmbeddingResult, seconds?: number, texts = 0): void {
    this.embeddingCalls.inc({ purpose, result });
    if (seconds !== undefined) this.embeddingSeconds.observe({ purpose }, seconds);
    if (texts > 0) this.embeddedTexts.inc(texts);
  }

  toolCall(tool: string, result: ToolResult): void {
    this.toolCalls.inc({ tool, result });
    if (result === "failed") this.error("tool");
  }

  error(kind: ErrorKind): void {
    this.errors.inc({ kind });
  }

  job(kind: string, result: JobResult): void {
    this.jobs.inc({ kind, result });
    if (result === "retry" || result === "failed") this.error("job");
  }

  providerCall(provider: string, call: "prefetch" | "sync" | "forget", result: ProviderResult): void {
    this.providerCalls.inc({ provider, call, result });
  }

  /** A kept event handed on again (an earlier process's, or after storage failed). */
  journalReplay(platform: string): void {
    this.journalReplays.inc({ platform });
  }

  journalGiveUp(platform: string): void {
    this.journalGivenUp.inc({ platform });
    this.error("turn");
  }

  acknowledged(platform: string, seconds: number): void {
    this.ackSeconds.observe({ platform }, seconds);
  }

  /** The Content-Type of `expose()`'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in Prometheus text format, the scrape-time gauges read now. */
  expose(): Promise<string> {
    return this.registry.metrics();
  }
}
