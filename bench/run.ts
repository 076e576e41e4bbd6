/**
 * `npm run bench [-- name...]`: runs the named benchmarks (all when none is named), prints each
 * one's table and writes bench/results/<name>.json. DATABASE_URL picks SQLite (default, a temp file)
 * or PostgreSQL (a temp database on that server). Figures are for comparing runs on one machine;
 * no test asserts a time.
 */
import { benchProvider, redact } from "./lib/db.ts";
import { currentCommit, writeResult } from "./lib/report.ts";

export interface BenchOutcome {
  name: string;
  /** Printed as is. */
  table: string;
  /** Written to bench/results/<name>.json (with the run's metadata added). */
  result: object;
  /** Set when the benchmark could not run here (missing data); the reason is printed. */
  skipped?: string;
}

type Bench = () => Promise<BenchOutcome>;

const BENCHMARKS: Record<string, () => Promise<Bench>> = {
  recall: async () => (await import("./recall.ts")).run,
  cost: async () => (await import("./cost.ts")).run,
  prompt: async () => (await import("./prompt.ts")).run,
  throughput: async () => (await import("./throughput.ts")).run,
  learning: async () => (await import("./learning.ts")).run,
  privacy: async () => (await import("./privacy.ts")).run,
  knowledge: async () => (await import("./knowledge.ts")).run,
  probes: async () => (await import("./probes.ts")).run,
  facts: async () => (await import("./facts.ts")).run,
  scale: async () => (await import("./scale.ts")).run,
  vectors: async () => (await import("./vectors.ts")).run,
};

/** Run only when named: each seeds millions of rows and takes many minutes (10M messages, 1M vectors). */
const ONLY_NAMED = new Set(["scale", "vectors"]);

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  const unknown = names.filter((n) => !(n in BENCHMARKS));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s): ${unknown.join(", ")}; choose from ${Object.keys(BENCHMARKS).join(", ")}`);
    process.exit(2);
  }
  const selected = names.length > 0 ? names : Object.keys(BENCHMARKS).filter((n) => !ONLY_NAMED.has(n));
  const provider = benchProvider();
  const commit = currentCommit();
  console.log(`cairn bench on ${provider}${process.env.DATABASE_URL ? ` (${redact(process.env.DATABASE_URL)})` : ""}, commit ${commit ?? "unknown"}\n`);
  const started = performance.now();
  let failed = false;
  for (const name of selected) {
    const t0 = performance.now();
    console.log(`== ${name}`);
    try {
      const outcome = await (await BENCHMARKS[name]!())();
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      if (outcome.skipped) console.log(`skipped: ${outcome.skipped}`);
      else console.log(outcome.table);
      const path = writeResult(name, { benchmark: name, commit, measuredAt: new Date().toISOString(), seconds, ...outcome.result, ...(outcome.skipped ? { skipped: outcome.skipped } : {}) });
      console.log(`(${seconds} s; ${path})\n`);
    } catch (err) {
      failed = true;
      console.error(`${name} failed:`, err);
    }
  }
  console.log(`all done in ${Math.round((performance.now() - started) / 1000)} s`);
  if (failed) process.exitCode = 1;
}

await main();
