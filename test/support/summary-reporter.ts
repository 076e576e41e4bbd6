import type { Reporter, SerializedError, TestModule, TestRunEndReason } from "vitest/node";

/**
 * Prints one plain closing line, "N passed, N failed, N skipped", so that CI (which reads runner
 * summaries) sees how many tests ran. A suite whose hooks failed, a file that failed to load, and an
 * unhandled error each count as a failure, so the line never says "0 failed" for a failing run.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, _reason: TestRunEndReason): void {
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
      for (const suite of mod.children.allSuites()) if (suite.errors().length > 0) failed++;
      if (mod.errors().length > 0) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
