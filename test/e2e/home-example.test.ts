/** `npm run home:example` runs as a person would run it: no keys, no network, and prints a Home tab drawn from the adapter's own blocks. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the Home example prints Ana's Home tab as Slack shows it, with only what she may see", async () => {
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/home-example.ts"], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  expect(stdout).toMatch(/^Ana's Home tab in Northwind \(a cairn admin; in #backend, not in #ops\): \d+ blocks, 10 items a page\.\n/);
  // Each section, under its header, in order.
  const headers = ["YOU", "TEAM", "SKILLS", "THIS WEEK"].map((h) => stdout.indexOf(`\n${h}\n━`));
  expect(headers.every((at) => at > 0)).toBe(true);
  expect([...headers].sort((a, b) => a - b)).toEqual(headers);
  // Her profile with its Delete button, the proposal with Approve and Reject, the admin's buttons.
  expect(stdout).toContain("  • Ana prefers answers as bullet points  _(tool, 2025-05-17)_   [ Delete ⚠ ]");
  // How long it has waited is read from the clock the example runs at (issue 27's approval queue).
  expect(stdout).toMatch(/ {2}• ALWAYS run `pnpm db:migrate --dry-run` before a production migration {2}_\(taught by Bo, 2025-06-15; waiting 1 day\)_\n {4}\[ Approve \] \[ Reject ⚠ \]/);
  expect(stdout).toContain("[ Forget me ]");
  expect(stdout).toContain("[ Edit persona ]");
  expect(stdout).toContain("`deploy-checklist` (pinned): Steps to ship the backend to production  _(used 120 times, last 2025-06-15)_   [ Unpin ]");
  expect(stdout).toContain("*Skills*  (page 1 of 2, 11 in all)");
  expect(stdout).toContain("    [ Show more ]");
  expect(stdout).toContain("Replies: *46* · corrections: *5* (10.9 per 100 replies)");
  // Never another person's profile, nor a lesson or skill of a channel she is not in.
  expect(stdout).not.toContain("Bo is on leave");
  expect(stdout).not.toContain("payments on-call");
  expect(stdout).not.toContain("ops-restart");
}, 90_000);
