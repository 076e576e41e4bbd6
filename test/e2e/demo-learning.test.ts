/** `npm run demo:learning` runs as a person would run it: no keys, no network, and it shows the rule changing the next answer. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the learning demo shows a correction becoming a team rule that changes the next answer in another channel", async () => {
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/demo-learning.ts"], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 60_000 });
  expect(stdout).toContain("what should I have done instead");
  expect(stdout).toContain("Approved by bo");
  expect(stdout).toMatch(/5\. In #frontend[\s\S]*Run `npm install`/);
  expect(stdout).toMatch(/7\. A new conversation in #frontend[\s\S]*Run `pnpm install`/);
  expect(stdout).toContain("The rule changed the next answer in another channel.");
}, 90_000);
