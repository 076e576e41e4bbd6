/**
 * Scope, proven by a fuzzer: no marker appears in a prompt outside the scopes allowed to see it
 * (DM -> that person; channel -> that channel; team -> that workspace; nothing across workspaces).
 * The benchmark runs the same fuzzer with a large seed; here a small one keeps `npm test` quick.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { runScopeFuzz } from "../support/scope-fuzz.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";

forEachDatabase("scope fuzz", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });

  it("never shows a marker outside its scope (seed 7)", async () => {
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null });
    const report = await runScopeFuzz(core, getDb(), fake, { seed: 7, workspaces: 3, people: 3, channels: 2, turns: 120, runId: uniqueId("fz") });
    console.log(`scope fuzz: ${report.promptsChecked} prompts checked, ${report.searches} searches, ${report.markers} markers, ${report.knowledgeSeen} channel-knowledge finds, ${report.violations.length} violations`);
    expect(report.violations).toEqual([]);
    expect(report.promptsChecked).toBeGreaterThan(150);
    expect(report.searches).toBeGreaterThan(20);
    // Listened channels' messages are found by their readers while membership changes.
    expect(report.knowledgeSeen).toBeGreaterThan(3);
  });
});
