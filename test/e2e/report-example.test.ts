/** `npx tsx scripts/report-example.ts` runs as a person would run it: no keys, no network, and prints the Slack message. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the report example prints the weekly review as posted to Slack", async () => {
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/report-example.ts"], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  expect(stdout).toContain("*This week in numbers*");
  expect(stdout).toContain("• Replies: *46* (last week 41) · 8 weeks ▅▆▅▆█▇▇█");
  expect(stdout).toContain("(rule, taught by Ana, approved by Bo)");
  expect(stdout).toContain("*Proposals*");
  expect(stdout).not.toContain("Italian");
}, 90_000);
