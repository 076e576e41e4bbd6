/**
 * Scope, proven by a fuzzer: no marker appears in a prompt outside the scopes allowed to see it
 * (DM -> that person; channel -> that channel; team -> that workspace; nothing across workspaces),
 * nor in a `why` answer about an answer (why this answer?) outside the scopes of whoever asks.
 * Team writes of people not trusted to share alone are proposals: allowed only where they were said
 * until someone else approves them; with the boundary switched off (CAIRN_TEAM_WRITES=open) the
 * same check fails.
 * The benchmark runs the same fuzzer with a large seed; here a small one keeps `npm test` quick.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { fuzzTeachers, runScopeFuzz } from "../support/scope-fuzz.ts";
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
    const opts = { seed: 7, workspaces: 3, people: 3, channels: 2, turns: 120, runId: uniqueId("fz") };
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, teamWrites: { teachers: fuzzTeachers(opts) } });
    const report = await runScopeFuzz(core, getDb(), fake, opts);
    console.log(
      `scope fuzz: ${report.promptsChecked} prompts checked, ${report.searches} searches, ${report.markers} markers, ${report.knowledgeSeen} channel-knowledge finds, ${report.whyChecked} why answers (${report.whyExplained} explained), ${report.approvals} approvals (${report.shared} shared), ${report.modeProbes} session_search mode/filter probes (${report.modeFinds} showed messages), ${report.shortIds.probes} short-id probes (${report.shortIds.found} found, ${report.shortIds.ambiguous} ambiguous), ${report.violations.length} violations`,
    );
    expect(report.violations).toEqual([]);
    // Short ids typed by everyone, of entries they may or may not see: found, and asked back about.
    expect(report.shortIds.found).toBeGreaterThan(0);
    expect(report.shortIds.ambiguous).toBeGreaterThan(0);
    // Approval states: proposals approved by their authors (nothing) and by teammates (shared).
    expect(report.approvals).toBeGreaterThan(5);
    expect(report.shared).toBeGreaterThan(1);
    // Why this answer?, asked about answers by people of their workspace, here and in their own DMs.
    expect(report.whyChecked).toBeGreaterThan(40);
    expect(report.whyExplained).toBeGreaterThan(20);
    expect(report.promptsChecked).toBeGreaterThan(150);
    expect(report.searches).toBeGreaterThan(20);
    // session_search's session, around and recent modes and its filters, on ids and names of every scope.
    expect(report.modeProbes).toBeGreaterThan(10);
    expect(report.modeFinds).toBeGreaterThan(3);
    // Listened channels' messages are found by their readers while membership changes.
    expect(report.knowledgeSeen).toBeGreaterThan(3);
    // A few seconds alone; a loaded CI machine with every suite on one PostgreSQL takes several times that.
  }, 120_000);

  it("fails with the boundary switched off: in open mode, proposals reach places that never saw them", async () => {
    const opts = { seed: 11, workspaces: 2, people: 3, channels: 2, turns: 40, runId: uniqueId("fo") };
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, teamWrites: { mode: "open", teachers: fuzzTeachers(opts) } });
    const report = await runScopeFuzz(core, getDb(), fake, opts);
    expect(report.violations.length).toBeGreaterThan(0);
    // Only the approval-state invariant breaks: every other scope still holds.
    expect(report.violations.every((v) => /proposed marker/.test(v))).toBe(true);
  }, 60_000);
});
