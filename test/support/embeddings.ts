/**
 * A real Core with embeddings on (the fake embeddings server) and its twin with them off, on one
 * database and one fake Anthropic server, for the end-to-end tests of semantic recall. The core's
 * log is captured (debug and up), so a test can read what an operator would.
 */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { Core } from "../../src/app/core.ts";
import type { AgentSettings } from "../../src/app/agent-settings.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { createLogger, type Logger } from "../../src/ground/log.ts";
import type { Database } from "../../src/db/client.ts";
import type { Embedder } from "../../src/providers/embeddings/embedder.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings.ts";
import { makeCore, TEST_SETTINGS } from "./agent.ts";
import { uniqueId } from "./db.ts";

export const DIMENSIONS = 256;
export const SPACE = `fake-embed@${DIMENSIONS}`;

export interface CapturedLog {
  log: Logger;
  /** Every line so far, parsed. */
  lines(): Record<string, unknown>[];
}

export function captureLog(): CapturedLog {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  return {
    log: createLogger("debug", { stderr: out }),
    lines: () =>
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface EmbeddingsHarness {
  anthropic: FakeAnthropic;
  embeddings: FakeEmbeddings;
  /** Embeddings on. */
  core: Core;
  /** The same database and model, embeddings off: words alone. */
  wordsOnly: Core;
  logs: CapturedLog;
  /** A fresh workspace id per test. */
  ws: string;
}

/** A core with embeddings on, built as main.ts would from these settings. */
export function embeddingsCore(db: Database, anthropic: FakeAnthropic, embeddings: FakeEmbeddings, log: Logger, overrides: Partial<AgentSettings> = {}): Core {
  const model = createModelClient({ apiKey: anthropic.apiKey, baseURL: anthropic.url, maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
  const settings: AgentSettings = {
    ...TEST_SETTINGS,
    ...overrides,
    embeddings: { url: embeddings.url, model: "fake-embed", dimensions: DIMENSIONS, timeoutMs: 2000, batch: 16, perMinute: 100_000 },
  };
  return new Core({ database: db, model, settings, log });
}

/** One suite's fakes and cores; before each test the fakes are reset and a new workspace is taken. */
export function embeddingsHarness(getDb: () => Database, settings: Partial<AgentSettings>, alike: readonly (readonly string[])[] = []): EmbeddingsHarness {
  const h = {} as EmbeddingsHarness;
  beforeAll(async () => {
    h.anthropic = await startFakeAnthropic();
    h.embeddings = await startFakeEmbeddings();
    h.embeddings.alike(alike);
    h.logs = captureLog();
    h.core = embeddingsCore(getDb(), h.anthropic, h.embeddings, h.logs.log, settings);
    h.wordsOnly = makeCore(getDb(), h.anthropic, settings);
  });
  afterAll(async () => {
    await h.anthropic.close();
    await h.embeddings.close();
  });
  beforeEach(() => {
    h.anthropic.reset();
    h.anthropic.setDefault({ text: "ok" });
    Object.assign(h.embeddings, { delayMs: 0, failWith: null, forceDimensions: null });
    h.ws = uniqueId("T");
  });
  return h;
}

/** Backfill steps until there is nothing left ("idle"); throws on a failed step or one that never ends. */
export async function drain(embedder: Embedder): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const step = await embedder.step();
    if (step === "idle") return;
    if (step === "failed") throw new Error("the backfill failed a step");
  }
  throw new Error("the backfill never went idle");
}
