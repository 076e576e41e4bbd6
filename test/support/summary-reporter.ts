import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one plain closing line, "N passed, N failed[, N skipped]", so that CI (which reads runner
 * summaries) sees how many tests ran, whatever reporter vitest itself prints.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
