/**
 * The `cairn` command (src/cli.ts, `bin` in the build): `cairn start` is the bot itself, stopped
 * by one SIGTERM with exit status 0, as systemd stops it; unknown commands get the usage.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { APP_TOKEN, BOT_TOKEN, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;

describe("the cairn command", { timeout: 90_000 }, () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let dir: string;

  const cairn = (args: string[], env: Record<string, string> = {}) =>
    spawn(process.execPath, ["--import", tsx, join(root, "src/cli.ts"), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env } });

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    dir = mkdtempSync(join(tmpdir(), "cairn-cli-"));
  });
  afterAll(async () => {
    await Promise.all([anthropic?.close(), slack?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts cairn, and stops it cleanly on one SIGTERM", async () => {
    const child = cairn(["start"], {
      ANTHROPIC_API_KEY: anthropic.apiKey,
      ANTHROPIC_BASE_URL: anthropic.url,
      DATABASE_URL: `file:${join(dir, "cairn.db")}`,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_APP_TOKEN: APP_TOKEN,
      SLACK_API_URL: slack.apiUrl,
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      await waitUntil("slack adapter started", () => stderr.includes("slack adapter started"), 60_000);
      await slack.waitForSocket();
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(stderr).toContain('"signal":"SIGTERM"');
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("shows its usage for an unknown command, with exit status 2", async () => {
    const child = cairn(["frobnicate"]);
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^usage: cairn \[start\]/);
    expect(stderr).toContain("cairn doctor [--timeout MS]");
  });
});
