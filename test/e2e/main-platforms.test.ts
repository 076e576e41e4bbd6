/**
 * The real entry point with Slack (HTTP mode) and Discord configured at once: one process, one
 * core, both platforms answered, the health and metrics endpoints on PORT and CAIRN_HEALTH_PORT,
 * and a clean stop on SIGTERM.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { BOT_TOKEN, SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { freePort } from "../fakes/http.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { parsePrometheusText, sumOf } from "../support/prom-text.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));


describe("npm start with Slack and Discord in one process", () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let child: ChildProcessWithoutNullStreams;
  let stderr = "";
  let dir: string;
  let port: number;
  let healthPort: number;
  const dana: FakeUser = { id: "400000000000000001", username: "dana" };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault((req) => {
      const last = JSON.stringify(req.body.messages.at(-1)?.content ?? "");
      return { text: last.includes("from slack") ? "Hello, Slack." : "Hello, Discord." };
    });
    slack = await startFakeSlack();
    discord = await startFakeDiscord({ guilds: [{ id: "500000000000000001", name: "Acme", channels: [{ id: "500000000000000002", name: "general" }], members: [dana] }] });
    dir = mkdtempSync(join(tmpdir(), "cairn-main-"));
    port = await freePort();
    healthPort = await freePort();
    // As `npm start` runs it (node --import tsx), with a preload whose SIGUSR2 leaves a promise
    // rejection unhandled inside cairn's process.
    child = spawn(process.execPath, ["--import", "tsx", "--import", "./test/fixtures/preload/reject-on-signal.mjs", "src/main.ts"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ANTHROPIC_API_KEY: anthropic.apiKey,
        ANTHROPIC_BASE_URL: anthropic.url,
        DATABASE_URL: `file:${join(dir, "cairn.db")}`,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        PORT: String(port),
        CAIRN_HEALTH_PORT: String(healthPort),
        CAIRN_HEALTH_HOST: "127.0.0.1",
        DISCORD_TOKEN: discord.token,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_URL: discord.apiUrl,
        LOG_LEVEL: "info",
      },
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    await waitUntil("both adapters started", () => stderr.includes("slack adapter started") && stderr.includes("discord adapter started"), 30_000);
  });
  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await Promise.all([anthropic?.close(), slack?.close(), discord?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers on both platforms, then stops cleanly on SIGTERM", async () => {
    const ts = slack.nextTs();
    const event = { type: "message", channel_type: "im", channel: "D0DANA", user: "U0DANA", text: "hi from slack", ts, event_ts: ts };
    const res = await postSigned(`http://127.0.0.1:${port}/slack/events`, eventCallback(slack.bot.teamId, event));
    expect(res.status).toBe(200);
    const slackPost = await waitUntil("the Slack answer", () => slack.callsTo("chat.postMessage").find((c) => c.args["channel"] === "D0DANA"), 15_000);
    expect(slackPost.args["text"]).toBe("Hello, Slack.");

    const ask = discord.sendDm(dana, "hi from discord");
    const discordPost = await waitUntil("the Discord answer", () => discord.posts.find((p) => p.content === "Hello, Discord."), 15_000);
    expect(discordPost.channelId).toBe(ask.channel_id);

    // Ready on both ports, naming both platforms; the metrics count the two answers.
    for (const at of [port, healthPort]) {
      const ready = await fetch(`http://127.0.0.1:${at}/readyz`);
      expect(ready.status).toBe(200);
      // The inbound journal is reported beside the checks: empty once every message is stored.
      expect(await ready.json()).toEqual({
        status: "ready",
        checks: { database: "ok", migrations: "ok", slack: "ok", discord: "ok" },
        journal: { depth: 0, oldest: null, waitingForStorage: false },
      });
    }
    const metrics = parsePrometheusText(await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text());
    expect(sumOf(metrics, "cairn_turns_total", { outcome: "ok" })).toBe(2);
    expect(sumOf(metrics, "cairn_model_calls_total", { purpose: "turn", result: "ok" })).toBe(2);
    expect(metrics.has("cairn_process_cpu_seconds_total")).toBe(true);

    // A rejection nothing handles is logged and counted; the process stays up and answers.
    child.kill("SIGUSR2");
    await waitUntil("the unhandled rejection logged", () => stderr.includes("unhandled promise rejection; cairn keeps running"), 15_000);
    expect(stderr).toContain("a rejection nobody handles");
    const after = parsePrometheusText(await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text());
    expect(sumOf(after, "cairn_errors_total", { kind: "unhandled" })).toBe(1);
    const ts2 = slack.nextTs();
    const again = { type: "message", channel_type: "im", channel: "D0DANA", user: "U0DANA", text: "still there? from slack", ts: ts2, event_ts: ts2 };
    expect((await postSigned(`http://127.0.0.1:${port}/slack/events`, eventCallback(slack.bot.teamId, again))).status).toBe(200);
    await waitUntil("the second Slack answer", () => slack.callsTo("chat.postMessage").filter((c) => c.args["channel"] === "D0DANA").length === 2, 15_000);
    expect(child.exitCode).toBeNull();

    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toContain('"signal":"SIGTERM"');
    expect(stderr).not.toContain(BOT_TOKEN);
    expect(stderr).not.toContain(discord.token);
  });
});
