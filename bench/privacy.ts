/**
 * The scope fuzzer at benchmark size (issue: at least 10,000 checked prompts per run): seeded
 * workspaces, people, DMs and channel threads through the real core and the fake Messages API over
 * HTTP; every prompt is checked for markers outside the scope allowed to see them.
 */
import type { BenchOutcome } from "./run.ts";
import { openBenchDatabase } from "./lib/db.ts";
import { benchCore } from "./lib/core.ts";
import { table } from "./lib/report.ts";
import { createModelClient } from "../src/agent/model.ts";
import { startFakeAnthropic } from "../test/fakes/anthropic.ts";
import { runScopeFuzz } from "../test/support/scope-fuzz.ts";

const TARGET_PROMPTS = 10_000;

export async function run(): Promise<BenchOutcome> {
  const bench = await openBenchDatabase("privacy");
  const fake = await startFakeAnthropic();
  try {
    const model = createModelClient({ apiKey: fake.apiKey, baseURL: fake.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 });
    const core = await benchCore(bench.database, model, { bundledSkillsDir: null, maxConcurrency: 8 });
    const started = performance.now();
    let prompts = 0;
    let searches = 0;
    let markers = 0;
    const violations: string[] = [];
    // Several seeds, each a fresh population, until the prompt target is met.
    let seed = 1;
    while (prompts < TARGET_PROMPTS) {
      const report = await runScopeFuzz(core, bench.database, fake, { seed, workspaces: 6, people: 5, channels: 3, turns: 1500, runId: `bench${seed}` });
      prompts += report.promptsChecked;
      searches += report.searches;
      markers += report.markers;
      violations.push(...report.violations);
      fake.reset();
      seed++;
    }
    const seconds = (performance.now() - started) / 1000;
    const result = { database: bench.provider, seeds: seed - 1, promptsChecked: prompts, searches, markers, violations: violations.length, examples: violations.slice(0, 10), seconds: Math.round(seconds * 10) / 10 };
    return {
      name: "privacy",
      table: table(["database", "seeds", "prompts checked", "searches", "markers", "violations"], [[bench.provider, seed - 1, prompts, searches, markers, violations.length]]),
      result,
    };
  } finally {
    await fake.close();
    await bench.close();
  }
}
