/**
 * The default CAIRN_MAX_CONCURRENCY fits a team: twenty people waiting on slow answers are all in
 * flight at once, not eight at a time behind each other; and when the model's rate limit refuses
 * many of them at once, they wait out its retry-after and are answered rather than apologised to.
 * Asserted on what the fake model saw, never on elapsed time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { loadConfig } from "../../src/app/config.ts";
import { makeCore } from "../support/agent.ts";
import { inboundFor, uniqueId } from "../support/db.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import type { Core } from "../../src/app/core.ts";
import type { HandleResult } from "../../src/ground/types.ts";

const PEOPLE = 20;

describe("conversations at once, with the default CAIRN_MAX_CONCURRENCY", () => {
  let dir: string;
  let db: Database;
  let fake: FakeAnthropic;
  let core: Core;
  const maxConcurrency = loadConfig({}).CAIRN_MAX_CONCURRENCY;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-concurrency-"));
    db = await openDatabase(`file:${join(dir, "cairn.db")}`);
    fake = await startFakeAnthropic();
    core = makeCore(db, fake, { maxConcurrency, bundledSkillsDir: null });
  });
  afterAll(async () => {
    await fake?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  /** One DM from each of `PEOPLE` people of a fresh workspace, all at once. */
  const everyoneAsks = (): Promise<HandleResult[]> => {
    const ws = uniqueId("T");
    return Promise.all(Array.from({ length: PEOPLE }, (_, i) => core.handle(inboundFor({ workspace: ws, user: `U${i}`, channel: `D${i}`, isDm: true }, `question ${i}`))));
  };
  const statuses = (results: HandleResult[]): string[] => results.map((r) => (r.kind === "reply" ? r.reply.status : r.kind));

  it("is well above a team's simultaneous questions", () => {
    expect(maxConcurrency).toBeGreaterThanOrEqual(64);
  });

  it("has twenty slow answers in flight together", async () => {
    // The model holds every answer until all twenty questions have reached it: with a bound of 8
    // the ninth never would, and waitForRequests says so.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake.setDefault({ reply: async () => (await gate, { text: "a slow answer" }) });
    const answers = everyoneAsks();
    await fake.waitForRequests(PEOPLE, 20_000);
    expect(fake.concurrency().now).toBe(PEOPLE);
    release();
    expect(statuses(await answers)).toEqual(Array(PEOPLE).fill("ok"));
    expect(fake.concurrency().max).toBe(PEOPLE);
  });

  it("backs off on the model's 429s and answers everyone", async () => {
    // The first call of every conversation is refused with a retry-after, as a tier's rate limit
    // refuses a burst; the retries (spread by jitter) are answered.
    let refused = 0;
    fake.setDefault({ reply: () => (refused++ < PEOPLE ? { error: 429, retryAfterMs: 50 } : { text: "answered after waiting" }) });
    const results = await everyoneAsks();
    expect(statuses(results)).toEqual(Array(PEOPLE).fill("ok"));
    expect(fake.requests).toHaveLength(2 * PEOPLE);
  });
});
