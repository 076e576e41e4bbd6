import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, scrubTokens } from "../../src/log.ts";
import { loadConfig } from "../../src/config.ts";

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
  return { log: createLogger("debug", out), text: () => text };
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
