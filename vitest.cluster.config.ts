import { defineConfig } from "vitest/config";

/**
 * The cluster tests (test/cluster): real cairn processes, as an operator runs them: replicas on one
 * PostgreSQL database (Socket Mode, HTTP mode behind a load balancer, scheduled slots) and one
 * process restarted with turns in flight (SQLite and PostgreSQL). They run on their own, after the
 * rest (`npm test`), one file at a time: several processes at once on a two-core machine, beside
 * another test file, slow everything they measure.
 */
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
