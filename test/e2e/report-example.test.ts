/** `npx tsx scripts/report-example.ts` runs as a person would run it: no keys, no network, and prints the Slack message (blocks and fallback text). */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the report example prints the weekly review as posted to Slack", async () => {
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/report-example.ts"], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  const [blocks = "", fallback = ""] = stdout.split("Its fallback text");
  // The blocks: the header, the sections with their sparklines, the footer.
  expect(blocks).toContain("The report as a person sees it in Slack (#team-reports, C0REPORTS; 14 blocks)");
  expect(blocks).toContain("\ncairn's weekly report for Northwind, 2025-06-09 to 2025-06-16\n");
  expect(blocks).toContain(
    "*Who used cairn (private messages counted, never quoted)*\n• People who talked to cairn: *5* · conversations: *4*\n• Questions answered: *46* (last week 41) · 8 weeks ▅▆▅▆█▇▇█",
  );
  expect(blocks).toContain("• Questions cairn couldn't answer: *2* (it apologised instead: 2 because its AI model could not be reached or stopped mid-answer)\n• AI model failures: *2*");
  // The repeated problem named by the question asked last (of two alike), cut to 80 characters.
  expect(blocks).toContain('• "Can I run the orders table migration on prod right now? It\'s blocking the…" needed correcting 2 times (Ana, Cy)');
  expect(blocks).toContain("ⓘ Every number is counted from cairn's records");
  // The fallback text: the stored Markdown as mrkdwn.
  expect(fallback).toContain("*cairn's weekly report* for Northwind, 2025-06-09 to 2025-06-16");
  expect(fallback).toContain("*Suggestions* (cairn's suggestions; a person decides)");
  expect(fallback).toContain("· admins: `/cairn forget rule-release-tags`");
  expect(stdout).toContain("(team rule, taught by Ana, approved by Bo)");
  expect(stdout).not.toContain("Italian");
}, 90_000);
