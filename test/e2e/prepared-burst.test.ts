/**
 * A burst's turns are prepared a few at a time, in arrival order (turn.ts, `preparing`), and the
 * bound is on preparing only: a turn waiting on the model, or on the summary that compresses its
 * session, holds no place in it. Were it held, no more turns than the bound could be waiting on
 * the model at once, and these tests would wait for requests that never come.
 * Asserted on what the fake model saw, never on elapsed time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { makeCore, TEST_SETTINGS } from "../support/agent.ts";
import { inboundFor, uniqueId } from "../support/db.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import type { HandleResult } from "../../src/ground/types.ts";
import type { MemoryProvider } from "../../src/ground/memory-provider.ts";

/** More than the turns prepared at once (16, app/core.ts). */
const PEOPLE = 40;

describe("a burst larger than the turns prepared at once", () => {
  let dir: string;
  let db: Database;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-prepared-"));
    db = await openDatabase(`file:${join(dir, "cairn.db")}`);
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  const statuses = (results: HandleResult[]): string[] => results.map((r) => (r.kind === "reply" ? r.reply.status : r.kind));

  it("has every turn waiting on the model at once, the first ones still unanswered", async () => {
    const core = makeCore(db, fake, { maxConcurrency: 256, bundledSkillsDir: null });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake.setDefault({ reply: async () => (await gate, { text: "a slow answer" }) });
    const ws = uniqueId("T");
    const answers = Promise.all(Array.from({ length: PEOPLE }, (_, i) => core.handle(inboundFor({ workspace: ws, user: `U${i}`, channel: `D${i}`, isDm: true }, `question ${i}`))));
    await fake.waitForRequests(PEOPLE, 20_000);
    expect(fake.concurrency().now).toBe(PEOPLE);
    release();
    expect(statuses(await answers)).toEqual(Array(PEOPLE).fill("ok"));
  });

  it("lets others be prepared while a turn waits on the summary that compresses its session", async () => {
    // A session of more than two messages and 300 characters is compressed before its next turn.
    const core = makeCore(db, fake, { maxConcurrency: 256, bundledSkillsDir: null, historyCharLimit: 300, historyKeepMessages: 2 });
    const ws = uniqueId("T");
    const place = (i: number) => ({ workspace: ws, user: `U${i}`, channel: `D${i}`, isDm: true });
    const long = "about the staging database migration and the deploy pipeline ".repeat(3);
    fake.setDefault({ reply: () => ({ text: `noted: ${long}` }) });
    for (let i = 0; i < PEOPLE; i++) {
      for (const n of [1, 2]) expect(statuses([await core.handle(inboundFor(place(i), `${long} ${n}`))])).toEqual(["ok"]);
    }
    fake.reset();
    // Every summary is held until all of them have been asked for; answers come at once.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake.setDefault({ reply: async (req) => (req.body.model === TEST_SETTINGS.summaryModel ? (await gate, { text: "they discussed the migration" }) : { text: "answered" }) });
    const answers = Promise.all(Array.from({ length: PEOPLE }, (_, i) => core.handle(inboundFor(place(i), `${long} 3`))));
    await fake.waitForRequests(PEOPLE, 20_000);
    expect(fake.requests.every((r) => r.body.model === TEST_SETTINGS.summaryModel)).toBe(true);
    expect(fake.concurrency().now).toBe(PEOPLE);
    release();
    expect(statuses(await answers)).toEqual(Array(PEOPLE).fill("ok"));
    expect(fake.requests.filter((r) => r.body.model === TEST_SETTINGS.model)).toHaveLength(PEOPLE);
  });

  it("lets others be prepared while a turn waits on a memory provider", async () => {
    // The provider answers no turn until every turn of the burst has asked it (well within its deadline).
    let asked = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: MemoryProvider = {
      name: "slow-notes",
      prefetch: async () => {
        if (++asked === PEOPLE) release();
        await gate;
        return [{ text: "the team deploys on Tuesdays", source: "notes" }];
      },
      sync: async () => {},
      forget: async () => {},
    };
    const core = makeCore(db, fake, { maxConcurrency: 256, bundledSkillsDir: null, providerDeadlineMs: 20_000 }, undefined, undefined, { providers: [slow] });
    fake.setDefault({ reply: () => ({ text: "answered" }) });
    const ws = uniqueId("T");
    const results = await Promise.all(Array.from({ length: PEOPLE }, (_, i) => core.handle(inboundFor({ workspace: ws, user: `U${i}`, channel: `D${i}`, isDm: true }, `question ${i}`))));
    expect(statuses(results)).toEqual(Array(PEOPLE).fill("ok"));
    expect(asked).toBe(PEOPLE);
    // Every answer had the provider's item: none was cut off by the deadline.
    expect(fake.requests).toHaveLength(PEOPLE);
    expect(fake.requests.every((r) => JSON.stringify(r.body.messages).includes("the team deploys on Tuesdays"))).toBe(true);
  });
});
