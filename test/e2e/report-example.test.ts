/** `npx tsx scripts/report-example.ts` runs as a person would run it: no keys, no network, and prints the Slack message (blocks and fallback text). */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the report example prints the weekly review as posted to Slack", async () => {
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/report-example.ts"], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  const [blocks = "", fallback = ""] = stdout.split("Its fallback text");
  // The blocks: the header, the sections with their sparklines, the footer.
  expect(blocks).toContain("The report as a person sees it in Slack (#team-reports, C0REPORTS; 11 blocks)");
  expect(blocks).toContain("\ncairn's weekly self-review for Northwind, 2025-06-09 to 2025-06-16\n");
  expect(blocks).toContain("*This week in numbers*\n• Replies: *46* (last week 41) · 8 weeks ▅▆▅▆█▇▇█");
  expect(blocks).toContain("ⓘ Numbers are counted from cairn's records");
  // The fallback text: the stored Markdown as mrkdwn.
  expect(fallback).toContain("*cairn's weekly self-review* for Northwind, 2025-06-09 to 2025-06-16");
  expect(fallback).toContain("*Proposals* (cairn's suggestions; a person decides)");
  expect(stdout).toContain("*This week in numbers*");
  expect(stdout).toContain("• Replies: *46* (last week 41) · 8 weeks ▅▆▅▆█▇▇█");
  expect(stdout).toContain("(rule, taught by Ana, approved by Bo)");
  expect(stdout).toContain("*Proposals*");
  expect(stdout).not.toContain("Italian");
}, 90_000);
