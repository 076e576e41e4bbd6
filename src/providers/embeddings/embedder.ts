/**
 * The embeddings provider's worker and its query path. In the background it embeds what has no
 * vector in the current space (vector-store.ts: messages newest first, then memory entries), a batch
 * at a time under a rate limit, backing off while the endpoint fails; it needs no queue (what is
 * missing is read from the tables), so it resumes after a restart and drains the backlog an outage
 * left. For a search it embeds the query under a deadline: late or failing, the search goes on with
 * words alone.
 *
 * The space is the model and the vector length: set by CAIRN_EMBEDDINGS_DIMENSIONS, or learned from
 * the first answer. A new model or length is a new space: searches use it as soon as it has vectors,
 * the backfill fills it, and the old space's vectors are deleted once it is complete.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { beforeDeadline, LATE } from "../../ground/deadline.ts";
import { errText, type Logger } from "../../ground/log.ts";
import { quantize, spaceKey } from "../../ground/vector.ts";
import type { Metrics } from "../../ops/metrics.ts";
import { embed, EmbeddingsError, type EmbeddingsSettings } from "./client.ts";
import type { QueryVector } from "../../history/store/search-vectors.ts";
import type { Backlog, PendingEntry, PendingMessage, VectorStore } from "./vector-store.ts";

export type { QueryVector };

export interface EmbedderOptions {
  settings: EmbeddingsSettings;
  store: VectorStore;
  metrics: Pick<Metrics, "embeddingCall">;
  log: Logger;
  /** Texts per request. */
  batch?: number;
  /** Requests a minute at most (the backfill's; queries are not limited). */
  perMinute?: number;
  /** Wait between looks when nothing is left to embed. */
  idleMs?: number;
}

/** Characters of a text that are embedded: its start says what it is about, and models cap their input. */
export const MAX_EMBED_CHARS = 2000;
/** The longest wait between tries while the endpoint fails. */
const MAX_BACKOFF_MS = 5 * 60_000;
/** Everything is looked at again this often, not only what is newer than the last full pass. */
const FULL_PASS_MS = 10 * 60_000;
/** The backlog shown in /metrics is counted at most this often. */
const BACKLOG_EVERY_MS = 30_000;
/** Queries embedded recently, by text: a model that searches twice with the same words waits once. */
const QUERY_CACHE = 200;
/** Failed or late queries in a row after which queries rest, and for how long. */
const QUERY_REST_AFTER = 3;
const QUERY_REST_MS = 30_000;

type Step = "worked" | "idle" | "failed";

export class Embedder {
  private space: string | null;
  private running: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  /** New messages are looked for above this id; the backfill walks down from `below`. */
  private above: number | null = null;
  private below = 0;
  private lastFullPass = 0;
  private oldSpacesDropped = false;
  private failures = 0;
  private backlogAt = 0;
  private backlogValue: Backlog | null = null;
  private readonly queries = new Map<string, Promise<{ vector: QueryVector | null; seconds: number; error?: string }>>();
  private queryFailures = 0;
  private restUntil = 0;

  constructor(private readonly o: EmbedderOptions) {
    this.space = o.settings.dimensions ? spaceKey({ model: o.settings.model, dimensions: o.settings.dimensions }) : null;
  }

  /** The space searches use; null until the first vector, when no length is set. */
  currentSpace(): string | null {
    return this.space;
  }

  start(): void {
    if (this.running) return;
    const { url, model, dimensions } = this.o.settings;
    this.o.log.info({ url, model, dimensions: dimensions ?? "the model's", vectorSearch: this.o.store.engine() }, "embeddings on: stored messages and memory are embedded in the background and searched by meaning too");
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  /** One step of the backfill: a batch embedded, nothing to do, or a failure (tests call it directly). */
  async step(): Promise<Step> {
    try {
      const space = this.space ?? (await this.learnSpace());
      const batch = this.o.batch ?? 32;
      // From time to time the backfill walks everything again (from the top): a message whose id
      // was taken before one already seen but committed after it, or whose vector was deleted
      // (an edit), is found then.
      if (this.above === null || Date.now() - this.lastFullPass > FULL_PASS_MS) {
        const top = await this.o.store.lastMessageId();
        this.above ??= top;
        this.below = this.above + 1;
        this.lastFullPass = Date.now();
      }
      // What arrived since, first; then the backfill's next batch below its cursor.
      const fresh = await this.o.store.pendingMessages(space, batch, { after: this.above });
      const messages = fresh.length > 0 ? fresh : await this.o.store.pendingMessages(space, batch, { before: this.below });
      if (messages.length > 0) {
        await this.embedMessages(space, messages);
        if (fresh.length > 0) this.above = Math.max(this.above, ...messages.map((m) => m.id));
        else this.below = Math.min(this.below, ...messages.map((m) => m.id));
        this.failures = 0;
        return "worked";
      }
      const entries = await this.o.store.pendingEntries(space, batch);
      if (entries.length > 0) {
        await this.embedEntries(space, entries);
        this.failures = 0;
        return "worked";
      }
      if (!this.oldSpacesDropped) {
        const dropped = await this.o.store.dropOtherSpaces(space);
        if (dropped === 0) this.oldSpacesDropped = true;
        else this.o.log.info({ dropped }, "embeddings: deleted vectors of an earlier model or length");
      }
      this.failures = 0;
      return "idle";
    } catch (err) {
      // Stopping aborts the request under way: nothing failed, and nothing was kept.
      if (this.stopping.signal.aborted) return "idle";
      this.failures++;
      // Once per run of failures at error level: an endpoint down for an hour is one alarm, not hundreds.
      const level = this.failures === 1 ? "error" : "debug";
      this.o.log[level]({ err: errText(err), failures: this.failures }, "embeddings: the backfill could not embed; trying again later");
      return "failed";
    }
  }

  /**
   * The vector of `text` (a search's words, or a message whose lessons are recalled) within
   * `deadlineMs`, or null: no answer in time, a failure, or the endpoint resting after failing
   * (QUERY_REST_AFTER failures or late answers in a row rest it QUERY_REST_MS, so an outage costs
   * turns nothing but the first few waits). The caller then goes on by words alone. A late answer is
   * kept for the next search with these words. Each request is counted once, by the caller that made it.
   */
  async queryVector(text: string, deadlineMs: number, purpose: "search" | "lessons" = "search"): Promise<QueryVector | null> {
    const key = text.trim().slice(0, MAX_EMBED_CHARS);
    if (key.length === 0) return null;
    let pending = this.queries.get(key);
    const asks = pending === undefined;
    if (!pending) {
      if (Date.now() < this.restUntil) {
        this.o.metrics.embeddingCall(purpose, "skipped");
        return null;
      }
      pending = this.embedQuery(key);
      if (this.queries.size >= QUERY_CACHE) this.queries.delete(this.queries.keys().next().value!);
      this.queries.set(key, pending);
    }
    const got = await beforeDeadline(pending, deadlineMs);
    if (!asks) return got === LATE ? null : got.vector;
    if (got === LATE) {
      this.o.metrics.embeddingCall(purpose, "late");
      this.queryTrouble(`no answer within ${deadlineMs} ms`);
      return null;
    }
    this.o.metrics.embeddingCall(purpose, got.error ? "failed" : "ok", got.seconds, got.error ? 0 : 1);
    if (got.error) this.queryTrouble(got.error);
    else this.queryFailures = 0;
    return got.vector;
  }

  /** The backlog, counted at most every BACKLOG_EVERY_MS (a scrape gets the last count at once). */
  backlog(): Backlog | null {
    if (this.space && Date.now() - this.backlogAt > BACKLOG_EVERY_MS) {
      this.backlogAt = Date.now();
      this.o.store.backlog(this.space).then(
        (b) => (this.backlogValue = b),
        () => undefined,
      );
    }
    return this.backlogValue;
  }

  /** A failed or late query: logged once per run of them, and after QUERY_REST_AFTER in a row the endpoint rests. */
  private queryTrouble(what: string): void {
    this.queryFailures++;
    if (this.queryFailures === 1) this.o.log.warn({ err: what }, "embeddings: a query could not be embedded in time; recalling by words alone");
    if (this.queryFailures >= QUERY_REST_AFTER) {
      this.restUntil = Date.now() + QUERY_REST_MS;
      this.queryFailures = 0;
      this.o.log.warn({ restMs: QUERY_REST_MS }, "embeddings: the endpoint keeps failing or answering late; queries rest, recall is by words alone meanwhile");
    }
  }

  private async embedQuery(text: string): Promise<{ vector: QueryVector | null; seconds: number; error?: string }> {
    const started = performance.now();
    try {
      const [v] = await embed(this.o.settings, [text]);
      const space = spaceKey({ model: this.o.settings.model, dimensions: v!.length });
      this.space ??= space;
      return { vector: space === this.space ? { space, vector: quantize(v!) } : null, seconds: (performance.now() - started) / 1000 };
    } catch (err) {
      this.queries.delete(text);
      return { vector: null, seconds: (performance.now() - started) / 1000, error: errText(err) };
    }
  }

  private async learnSpace(): Promise<string> {
    const [v] = await this.call(["space"]);
    this.space ??= spaceKey({ model: this.o.settings.model, dimensions: v!.length });
    return this.space;
  }

  private async embedMessages(space: string, rows: PendingMessage[]): Promise<void> {
    const vectors = await this.vectorsOf(rows.map((r) => r.text));
    await this.o.store.saveMessages(space, rows.map((r, i) => ({ id: r.id, workspaceId: r.workspaceId, vector: vectors[i]! })));
  }

  private async embedEntries(space: string, rows: PendingEntry[]): Promise<void> {
    const vectors = await this.vectorsOf(rows.map((r) => r.text));
    await this.o.store.saveEntries(space, rows.map((r, i) => ({ id: r.id, workspaceId: r.workspaceId, textHash: r.textHash, vector: vectors[i]! })));
  }

  /**
   * Codings of `texts`. A batch the endpoint refuses as a request (400, 413, 422) is asked text by
   * text, and a text refused alone gets an empty vector: kept so it is not asked again, never
   * compared. Any other failure throws (the step backs off; nothing is kept).
   */
  private async vectorsOf(texts: string[]): Promise<Uint8Array[]> {
    try {
      return (await this.call(texts)).map((v) => quantize(v));
    } catch (err) {
      const refused = err instanceof EmbeddingsError && err.reason === "http" && [400, 413, 422].includes(err.status ?? 0);
      if (!refused) throw err;
      if (texts.length === 1) return [new Uint8Array(0)];
      const out: Uint8Array[] = [];
      for (const t of texts) out.push(...(await this.vectorsOf([t])));
      return out;
    }
  }

  private async call(texts: string[]): Promise<Float32Array[]> {
    const started = performance.now();
    try {
      const vectors = await embed(this.o.settings, texts.map((t) => t.slice(0, MAX_EMBED_CHARS)), this.stopping.signal);
      this.o.metrics.embeddingCall("backfill", "ok", (performance.now() - started) / 1000, texts.length);
      return vectors;
    } catch (err) {
      if (!this.stopping.signal.aborted) this.o.metrics.embeddingCall("backfill", "failed", (performance.now() - started) / 1000);
      throw err;
    }
  }

  private async loop(): Promise<void> {
    const signal = this.stopping.signal;
    const pause = 60_000 / (this.o.perMinute ?? 60);
    while (!signal.aborted) {
      const step = await this.step();
      const wait = step === "worked" ? pause : step === "idle" ? (this.o.idleMs ?? 5_000) : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(this.failures, 20));
      // Stopping ends the wait at once.
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }
}
