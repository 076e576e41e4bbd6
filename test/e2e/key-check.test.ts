/**
 * Issue 28, "the first hour": ANTHROPIC_API_KEY is tried at start-up (one 1-token request) and a
 * refused key stops cairn with one sentence; a key refused later gets an honest reply, not the
 * outage apology. The real entry point in a child process, against the fake Anthropic server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { runCairn as runCairnWith } from "../support/run-cairn.ts";
import { MODEL_KEY_REFUSED_ADMIN_NOTICE, MODEL_KEY_REFUSED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { KEY_CHECK_PROMPT } from "../../src/agent/key-check.ts";

/** Types the next line once the previous answer appeared (after the start banner), calling `beforeLine` first. */
const runCairn = (env: Record<string, string>, lines: string[], beforeLine: (sent: number) => void = () => {}) =>
  runCairnWith(env, lines, (out, sent) => {
    const ready = (out.match(/^cairn> /gm)?.length ?? 0) >= sent && out.includes("talking as");
    if (ready && sent < lines.length) beforeLine(sent);
    return ready;
  });

describe("the start-up key check", () => {
  let fake: FakeAnthropic;
  let dir: string;
  let n = 0;
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    ANTHROPIC_API_KEY: fake.apiKey,
    ANTHROPIC_BASE_URL: fake.url,
    DATABASE_URL: `file:${join(dir, `k${++n}.db`)}`,
    CAIRN_CONSOLE_USER: "dana",
    LOG_LEVEL: "silent",
    ...extra,
  });
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "cairn-key-"));
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops start-up with one sentence naming ANTHROPIC_API_KEY when the key is refused (401), no stack", async () => {
    const run = await runCairn(env({ ANTHROPIC_API_KEY: "sk-ant-wrong" }), []);
    expect(run.code).toBe(1);
    const said = run.stderr.trim();
    expect(said.split("\n")).toHaveLength(1);
    expect(said).toBe(`cairn could not start: the model API at ${fake.url} refused ANTHROPIC_API_KEY (401): set a valid key (console.anthropic.com, API keys), or CAIRN_CHECK_KEY=off to start without checking it.`);
    expect(said).not.toMatch(/\n\s+at /);
    // The check reached the API once, and nothing else did: no turn, no chat.
    expect(fake.rejected.map((r) => r.status)).toEqual([401]);
    expect(run.stdout).not.toContain("cairn> ");
  });

  it("stops the same way when the key is refused with 403 (no permission)", async () => {
    fake.failForever(403);
    const run = await runCairn(env(), []);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^cairn could not start: .* refused ANTHROPIC_API_KEY \(403\): .*CAIRN_CHECK_KEY=off/);
    expect(fake.keyChecks).toHaveLength(1);
  });

  it("sends one 1-token request with the summary model, spending no scripted reply, then chats", async () => {
    fake.enqueue({ text: "Hello Dana." });
    const run = await runCairn(env({ CAIRN_SUMMARY_MODEL: "claude-haiku-test" }), ["hello"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("cairn> Hello Dana.");
    expect(fake.keyChecks).toHaveLength(1);
    expect(fake.keyChecks[0]!.body).toMatchObject({ model: "claude-haiku-test", max_tokens: 1, messages: [{ role: "user", content: KEY_CHECK_PROMPT }] });
    expect(fake.requests).toHaveLength(1);
  });

  it("with CAIRN_CHECK_KEY=off sends no check and starts even with a refused key", async () => {
    const run = await runCairn(env({ CAIRN_CHECK_KEY: "off", ANTHROPIC_API_KEY: "sk-ant-wrong" }), ["hello"]);
    expect(run.code).toBe(0);
    expect(fake.keyChecks).toHaveLength(0);
    // Only the turn's own call was refused: no check went out before it.
    expect(fake.rejected).toHaveLength(1);
    expect(run.stdout).toContain(`cairn> ${MODEL_KEY_REFUSED_REPLY}`);
  });

  it("starts with a warning when the API fails the check with a 5xx: the outage path answers", async () => {
    fake.failForever(503);
    const run = await runCairn(env({ LOG_LEVEL: "warn", CAIRN_MODEL_MAX_ATTEMPTS: "1" }), ["hello"]);
    expect(run.code).toBe(0);
    expect(fake.keyChecks).toHaveLength(1);
    expect(run.stderr).toContain("could not confirm ANTHROPIC_API_KEY at start-up");
    expect(run.stderr).not.toContain("could not start");
    expect(run.stdout).toContain(`cairn> ${MODEL_UNAVAILABLE_REPLY}`);
  });

  it("a key refused mid-run gets the honest reply, not the outage apology, and the admins one DM", async () => {
    fake.enqueue({ text: "Hello Dana." });
    // The key passes the check and the first question, then the API starts refusing it (revoked).
    const run = await runCairn(env({ CAIRN_ADMINS: "console:dana" }), ["hello", "and now?", "still there?"], (sent) => {
      if (sent === 1) fake.failForever(401);
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("cairn> Hello Dana.");
    expect(run.stdout.split(`cairn> ${MODEL_KEY_REFUSED_REPLY}`)).toHaveLength(3);
    expect(run.stdout).not.toContain(MODEL_UNAVAILABLE_REPLY);
    // Not retried: a refused key is final at once (one call per question).
    expect(fake.requests).toHaveLength(3);
    // The admin (dana, in the console) is told once, not once per refused question.
    expect(run.stdout.split(MODEL_KEY_REFUSED_ADMIN_NOTICE)).toHaveLength(2);
  });
});
