import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real processes on one database: run alone, after the rest (vitest.cluster.config.ts, npm run test:cluster).
    exclude: ["test/cluster/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Database suites create their own databases; run files in parallel but keep it modest on 2 cores.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
