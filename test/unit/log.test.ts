import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { consoleLogFile, createLogger, scrubTokens } from "../../src/ground/log.ts";
import { loadConfig } from "../../src/app/config.ts";
import { PROJECT_ROOT } from "../../src/ground/paths.ts";

const TOKENS = {
  slackBot: "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
  slackApp: "xapp-1-A0123456789-1234567890-abcdef0123456789",
  anthropic: "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  discord: "MTEyMzQ1Njc4OTAxMjM0NTY3OA.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789",
  signing: "8f14e45fceea167a5a36dedd4bea2543",
};

function capture(): { log: ReturnType<typeof createLogger>; text: () => string } {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  return { log: createLogger("debug", { stderr: out }), text: () => text };
}

describe("logs never carry tokens", () => {
  it("redacts configured secrets by path and token shapes anywhere in a line", async () => {
    const { log, text } = capture();
    const cfg = loadConfig({ ANTHROPIC_API_KEY: TOKENS.anthropic, SLACK_BOT_TOKEN: TOKENS.slackBot, SLACK_APP_TOKEN: TOKENS.slackApp, SLACK_SIGNING_SECRET: TOKENS.signing, DISCORD_TOKEN: TOKENS.discord, DISCORD_APPLICATION_ID: "123456789012345678" });
    log.info({ cfg }, "config loaded");
    log.info(cfg, "config at top level");
    log.warn({ req: { headers: { authorization: `Bearer ${TOKENS.anthropic}`, "x-api-key": TOKENS.anthropic } } }, "request");
    log.error({ err: new Error(`auth failed for token ${TOKENS.slackBot} at postgres://bob:hunter22@db:5432/x`) }, `discord login with ${TOKENS.discord}`);
    log.info({ settings: { botToken: TOKENS.slackBot, signingSecret: TOKENS.signing, appToken: TOKENS.slackApp } }, "slack settings");
    await new Promise((r) => setImmediate(r));
    const written = text();
    expect(written.split("\n").filter(Boolean)).toHaveLength(5);
    for (const [name, token] of Object.entries(TOKENS)) expect(written, name).not.toContain(token);
    expect(written).not.toContain("hunter22");
    expect(written).toContain("[REDACTED]");
    expect(written).toContain("postgres://bob:[REDACTED]@db");
    expect(written).toContain("config loaded");
  });

  it("leaves ordinary text alone", () => {
    const line = '{"msg":"turn answered","conversation":"slack:T1:C1:1700000000.000100","iterations":2}';
    expect(scrubTokens(line)).toBe(line);
  });
});

describe("a logger with a file (the console)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "cairn-log-"));
    dirs.push(dir);
    return join(dir, "not", "yet", "cairn.log");
  }
  const fileLines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string });

  it("writes every line to the file, appending, and only warnings and errors to stderr, scrubbed in both", async () => {
    const file = tempFile();
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{"level":30,"msg":"from an earlier run"}\n');
    const stderr = new PassThrough();
    let err = "";
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const log = createLogger("debug", { file, stderr });
    log.debug("debug chatter");
    log.info({ settings: { note: `token ${TOKENS.slackBot}` } }, "info with xoxb-123-456-abcdef inside");
    log.warn(`warned about ${TOKENS.anthropic}`);
    log.error({ err: new Error(`failed with ${TOKENS.discord}`) }, "an error");
    await vi.waitFor(() => expect(fileLines(file)).toHaveLength(5));

    const written = readFileSync(file, "utf8");
    expect(fileLines(file).map((l) => l.msg)).toEqual(["from an earlier run", "debug chatter", "info with [REDACTED] inside", "warned about [REDACTED]", "an error"]);
    for (const [name, token] of Object.entries({ ...TOKENS, short: "xoxb-123-456-abcdef" })) {
      expect(written, name).not.toContain(token);
      expect(err, name).not.toContain(token);
    }
    const errLines = err.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(errLines.map((l) => [l.level, l.msg])).toEqual([
      [40, "warned about [REDACTED]"],
      [50, "an error"],
    ]);
  });

  it("keeps the logger's level: below it nothing goes anywhere", async () => {
    const file = tempFile();
    const stderr = new PassThrough();
    let err = "";
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const log = createLogger("warn", { file, stderr });
    log.info("not wanted");
    log.warn("wanted");
    await vi.waitFor(() => expect(fileLines(file).map((l) => l.msg)).toEqual(["wanted"]));
    expect(err).toContain('"msg":"wanted"');
    expect(err).not.toContain("not wanted");
  });

  it("flushes the file when the process exits right after a burst of lines", () => {
    const file = tempFile();
    const script = [
      `import { createLogger } from ${JSON.stringify(join(PROJECT_ROOT, "src/ground/log.ts"))};`,
      `const log = createLogger("info", { file: ${JSON.stringify(file)} });`,
      `for (let i = 0; i < 3000; i++) log.info({ i }, "burst");`,
      `log.warn("last words");`,
      `process.exit(0);`,
    ].join("\n");
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const lines = fileLines(file);
    expect(lines).toHaveLength(3001);
    expect(lines.at(-1)!.msg).toBe("last words");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain('"msg":"last words"');
  });
});

describe("consoleLogFile", () => {
  it.each([
    ["file:./data/cairn.db", "./data/cairn.log"],
    ["file:/var/lib/cairn/team.db", "/var/lib/cairn/cairn.log"],
    ["file:cairn.db", "./cairn.log"],
    ["file::memory:", "./data/cairn.log"],
    ["postgresql://cairn@localhost:5432/cairn", "./data/cairn.log"],
    ["postgres://cairn:secret@db/cairn", "./data/cairn.log"],
  ])("%s -> %s", (url, expected) => {
    expect(consoleLogFile(url)).toBe(expected);
  });
});
