/**
 * Scope with embeddings on (issue 30): the scope fuzzer with its paraphrase probes, which share no
 * word with what they find, so every find came through the vector path (search-vectors.ts). No marker
 * reaches anyone outside its scope, the vector path was used, and every row the vector query itself
 * returned for the probes (asked directly, as the asker) was one the asker may see.
 *
 * Then a mutant, to show the fuzzer notices a vector query without its scope clause: a copy of the
 * module with the clause made always true, loaded in its place for one run. The search checks scope a
 * second time where it reads what hits show of their conversations (`display`), which keeps such rows
 * out of the prompts: the fuzzer's direct check of the vector query is what catches it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { forEachDatabase, uniqueId, type Database } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { fuzzTeachers, runScopeFuzz, type FuzzOptions, type FuzzReport } from "../support/scope-fuzz.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings.ts";

let embeddings: FakeEmbeddings;
beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
});
afterAll(() => embeddings.close());

/** A core's embeddings settings on the fake: 256 dimensions keep its hashed words apart. */
const embeddingSettings = () => ({
  embeddings: { url: embeddings.url, model: "fake-embed", dimensions: 256, timeoutMs: 5_000 },
  // A loaded machine must not make a query's vector late: the probe would fall back to words.
  providerDeadlineMs: 5_000,
});

const summary = (r: FuzzReport, provider: string, ms: number): string =>
  `scope fuzz with embeddings [${provider}]: ${r.promptsChecked} prompts checked, ${r.searches} searches, ${r.vectors.probes} paraphrase probes (${r.vectors.finds} vector finds; ${r.vectors.rows} rows of the vector query checked, ${r.vectors.guarded} of DMs or listened channels), ${r.knowledgeSeen} channel-knowledge finds, ${r.whyChecked} why answers, ${r.violations.length} violations, ${ms} ms`;

forEachDatabase("scope fuzz with embeddings", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });

  it("never shows a marker outside its scope, with finds only the vector path could make (seed 5)", async () => {
    const opts = { seed: 5, workspaces: 3, people: 3, channels: 2, turns: 60, runId: uniqueId("fv"), vectors: embeddings };
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, teamWrites: { teachers: fuzzTeachers(opts) }, ...embeddingSettings() });
    const started = Date.now();
    const report = await runScopeFuzz(core, getDb(), fake, opts);
    console.log(summary(report, getDb().provider, Date.now() - started));
    expect(report.violations).toEqual([]);
    // The vector path was used: messages found by a query that shares no word with them.
    expect(report.vectors.finds).toBeGreaterThan(10);
    // The vector query's own rows were checked, among them rows its scope clause decides on.
    expect(report.vectors.guarded).toBeGreaterThan(0);
    expect(report.vectors.rows).toBeGreaterThan(report.vectors.guarded);
  }, 120_000);

  it("fails with the vector query's scope clause taken out", async () => {
    const report = await fuzzMutant(getDb(), VECTOR_SCOPE_REMOVED);
    expect(report.vectors.finds).toBeGreaterThan(0);
    // Others' DMs and listened channels the asker cannot read, returned by the vector query; the
    // display's check keeps them out of the prompts, so the direct check is the one that fails.
    expect(report.violations.length).toBeGreaterThan(0);
    expect(report.violations.every((v) => v.startsWith("vector-store: "))).toBe(true);
  }, 120_000);
});

// ---- Mutants: copies of src modules with a scope clause made always true, loaded in their place.

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

interface Mutant {
  /** The module, under src/. */
  path: string;
  /** Exact source texts and what replaces them (each must occur). */
  edits: [from: string, to: string][];
}

/**
 * Source standing for an always-true condition in place of `clause` (a JS expression of SQL text),
 * its placeholders kept and bound, so the statement's parameters stay those the code passes.
 */
const sqliteTrue = (clause: string) => `\${"(1=1" + ${clause}.replace(/[^?]/g, "").replace(/\\?/g, " OR ? IS NULL") + ")"}`;
const pgTrue = (clause: string) => `\${"(true" + (${clause}.match(/\\$\\d+/g) ?? []).map((p) => " OR " + p + "::text IS NULL").join("") + ")"}`;

/** nearestMessages reads every vector of the workspace, whoever may see its message (both providers' statements). */
const VECTOR_SCOPE_REMOVED: Mutant[] = [
  {
    path: "history/store/search-vectors.ts",
    edits: [
      ["${SQLITE_SCOPE}", sqliteTrue("SQLITE_SCOPE")],
      ["${PG_SCOPE(1)}", pgTrue("PG_SCOPE(1)")],
    ],
  },
];

/** The mutant's text: `edits` applied, relative imports pointed at the originals, and a mark that it loaded. */
function mutantSource(m: Mutant): string {
  const file = join(SRC, m.path);
  let text = readFileSync(file, "utf8");
  for (const [from, to] of m.edits) {
    if (!text.includes(from)) throw new Error(`the mutant of ${m.path} does not apply: ${from} is not in it`);
    text = text.split(from).join(to);
  }
  text = text.replace(/from "(\.{1,2}\/[^"]+)"/g, (_, rel: string) => `from "${resolve(dirname(file), rel)}"`);
  return `${text}\nexport const MUTANT = true;\n`;
}

/**
 * One fuzz run (small: the paraphrase phase carries most probes) on a core built from a fresh
 * module graph in which each mutant replaces its module, on its own handle of `database`.
 */
async function fuzzMutant(database: Database, all: Mutant[]): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-mutant-"));
  const fresh: { fake?: FakeAnthropic; db?: Database } = {};
  try {
    for (const m of all) {
      const out = join(dir, m.path.replace(/\//g, "__"));
      writeFileSync(out, mutantSource(m));
      vi.doMock(join(SRC, m.path), () => import(out));
    }
    vi.resetModules();
    for (const m of all) expect((await import(join(SRC, m.path))).MUTANT, `${m.path} is the mutant`).toBe(true);
    const agent: typeof import("../support/agent.ts") = await import("../support/agent.ts");
    const fuzz: typeof import("../support/scope-fuzz.ts") = await import("../support/scope-fuzz.ts");
    const support: typeof import("../support/db.ts") = await import("../support/db.ts");
    const anthropic: typeof import("../fakes/anthropic.ts") = await import("../fakes/anthropic.ts");
    fresh.fake = await anthropic.startFakeAnthropic();
    fresh.db = await support.sameDatabase(database);
    const opts: FuzzOptions = { seed: 13, workspaces: 2, people: 3, channels: 2, turns: 20, runId: uniqueId("fm"), vectors: embeddings };
    const core = agent.makeCore(fresh.db, fresh.fake, { bundledSkillsDir: null, teamWrites: { teachers: fuzz.fuzzTeachers(opts) }, ...embeddingSettings() });
    const started = Date.now();
    const report = await fuzz.runScopeFuzz(core, fresh.db, fresh.fake, opts);
    console.log(`mutant (${all.map((m) => m.path).join(", ")}): ${summary(report, database.provider, Date.now() - started)}`);
    return report;
  } finally {
    await fresh.fake?.close();
    await fresh.db?.close();
    for (const m of all) vi.doUnmock(join(SRC, m.path));
    vi.resetModules();
    rmSync(dir, { recursive: true, force: true });
  }
}
