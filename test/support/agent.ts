/** Builds a real Core against a test database and the fake Anthropic server. */
import { Core } from "../../src/app/core.ts";
import type { AgentSettings, CoreDeps } from "../../src/app/agent-settings.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { BUNDLED_SKILLS_DIR } from "../../src/app/settings.ts";
import { OPEN_POLICY } from "../../src/admission/access.ts";
import type { Database } from "../../src/db/client.ts";
import type { JobHandler } from "../../src/jobs/worker.ts";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from "../fakes/anthropic.ts";
import { uniqueId } from "./db.ts";

export const TEST_SETTINGS: AgentSettings = {
  model: "claude-sonnet-5-5",
  summaryModel: "claude-haiku-5-5",
  maxTokens: 1024,
  budgets: { user: 1375, channel: 1500, team: 2200 },
  sessionIdleMs: 2 * 60 * 60 * 1000,
  toolIterations: 20,
  historyCharLimit: 48_000,
  historyKeepMessages: 10,
  maxConcurrency: 8,
  access: OPEN_POLICY,
  rateLimitPerHour: 0,
  bundledSkillsDir: BUNDLED_SKILLS_DIR,
};

export function makeCore(db: Database, fake: FakeAnthropic, overrides: Partial<AgentSettings> = {}, now?: () => Date, handlers?: JobHandler<unknown>[], extra: Pick<CoreDeps, "providers"> = {}): Core {
  const model = createModelClient({ apiKey: fake.apiKey, baseURL: fake.url, maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
  return new Core({ database: db, model, settings: { ...TEST_SETTINGS, ...overrides }, log: silentLogger, ...(now ? { now } : {}), ...(handlers ? { handlers } : {}), ...extra });
}

export interface ToolResultBlock {
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

/** The tool_result blocks a request carries in its last user message. */
export function toolResults(req: RecordedRequest): ToolResultBlock[] {
  const last = req.body.messages.at(-1);
  if (!last || typeof last.content === "string") return [];
  return last.content.flatMap((b) => {
    if (b.type !== "tool_result") return [];
    const r = b as { tool_use_id?: unknown; content?: unknown; is_error?: unknown };
    return [{ tool_use_id: String(r.tool_use_id), content: typeof r.content === "string" ? r.content : JSON.stringify(r.content), is_error: r.is_error === true }];
  });
}

export interface CoreHarness {
  fake: FakeAnthropic;
  core: Core;
  /** A fresh workspace id per test. */
  ws: string;
}

export interface HarnessOptions {
  settings?: Partial<AgentSettings>;
  now?: () => Date;
  /** Import the bundled skills once (Core.start). */
  start?: boolean;
  /** What the fake answers when a test scripted nothing; null leaves the fake's own placeholder. */
  defaultReply?: string | null;
  /** Memory providers given to the core (src/providers/). */
  providers?: CoreDeps["providers"];
}

/**
 * The usual set-up of a suite that talks to a real Core: one fake Anthropic server and one Core per
 * suite, and before each test a reset fake and a new workspace. Fields are valid inside hooks and tests.
 */
export function coreHarness(getDb: () => Database, opts: HarnessOptions = {}): CoreHarness {
  const h = {} as CoreHarness;
  const reply = opts.defaultReply === undefined ? "ok" : opts.defaultReply;
  beforeAll(async () => {
    h.fake = await startFakeAnthropic();
    h.core = makeCore(getDb(), h.fake, opts.settings ?? {}, opts.now, undefined, opts.providers ? { providers: opts.providers } : {});
    if (opts.start) await h.core.start();
  });
  afterAll(async () => {
    await h.fake.close();
  });
  beforeEach(() => {
    h.fake.reset();
    if (reply !== null) h.fake.setDefault({ text: reply });
    h.ws = uniqueId("T");
  });
  return h;
}
