/**
 * CAIRN_ALLOW_MASS_MENTIONS: by default a reply that says `<!here>` (Slack) or `@everyone`
 * (Discord) pings nobody; an admin may let such mentions through on both platforms. Through the
 * real Bolt and discord.js against the fake Slack and Discord.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { loadConfig } from "../../src/app/config.ts";
import { slackSettings } from "../../src/app/slack-settings.ts";
import { startSlack, type SlackHandle, type SlackSettings } from "../../src/platforms/slack/adapter.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { BOT_TOKEN, SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";

const ANSWER = "Heads up <!here> and <!subteam^S0OPS|@ops>: @everyone the deploy is at 5.";

describe("mass mentions in replies", () => {
  let dir: string;
  let db: Database;
  let anthropic: FakeAnthropic;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-mass-"));
    db = await openDatabase(`file:${join(dir, "cairn.db")}`);
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: ANSWER });
    core = makeCore(db, anthropic, { bundledSkillsDir: null });
  });
  afterAll(async () => {
    await anthropic?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is off unless CAIRN_ALLOW_MASS_MENTIONS says true", () => {
    expect(loadConfig({}).CAIRN_ALLOW_MASS_MENTIONS).toBe(false);
    expect(loadConfig({ CAIRN_ALLOW_MASS_MENTIONS: "TRUE" }).CAIRN_ALLOW_MASS_MENTIONS).toBe(true);
    expect(() => loadConfig({ CAIRN_ALLOW_MASS_MENTIONS: "sometimes" })).toThrow(/CAIRN_ALLOW_MASS_MENTIONS: expected true or false/);
    const slack = slackSettings(loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1", CAIRN_ALLOW_MASS_MENTIONS: "true" }));
    expect(slack?.allowMassMentions).toBe(true);
  });

  describe("on Slack", () => {
    let slack: FakeSlack;
    const adapters: SlackHandle[] = [];
    beforeAll(async () => {
      slack = await startFakeSlack();
    });
    afterAll(async () => {
      for (const a of adapters) await a.stop();
      await slack?.close();
    });

    const answerIn = async (allowMassMentions: boolean | undefined, user: string): Promise<string> => {
      const settings: SlackSettings = { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl, port: 0, host: "127.0.0.1", retries: 0, ...(allowMassMentions === undefined ? {} : { allowMassMentions }) };
      const adapter = await startSlack(core, settings, silentLogger);
      adapters.push(adapter);
      const ts = slack.nextTs();
      const channel = `D${user}`;
      const res = await postSigned(`http://127.0.0.1:${adapter.port}/slack/events`, eventCallback("TMASS", { type: "message", channel_type: "im", channel, user, text: "when is the deploy?", ts, event_ts: ts }));
      expect(res.status).toBe(200);
      const post = await waitUntil("the answer", () => slack.callsTo("chat.postMessage").find((c) => c.args.channel === channel), 15_000);
      return String(post.args.text);
    };

    it("shows them as text by default", async () => {
      const text = await answerIn(undefined, "UDEFAULT");
      expect(text).toContain("&lt;!here&gt;");
      expect(text).toContain("&lt;!subteam^S0OPS|@ops&gt;");
      expect(text).not.toMatch(/<!(?:here|subteam)/);
    });

    it("keeps them as Slack mentions when allowed", async () => {
      const text = await answerIn(true, "UALLOWED");
      expect(text).toBe("Heads up <!here> and <!subteam^S0OPS|@ops>: @everyone the deploy is at 5.");
    });
  });

  describe("on Discord", () => {
    const guild = snowflake();
    const general = snowflake();
    const alice: FakeUser = { id: snowflake(), username: "alice" };
    let discord: FakeDiscord;
    let adapter: DiscordAdapter;
    beforeAll(async () => {
      discord = await startFakeDiscord({ guilds: [{ id: guild, name: "Acme", channels: [{ id: general, name: "general" }], members: [alice] }] });
      adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl, allowMassMentions: true }, silentLogger, { typingIntervalMs: 1_000 });
    });
    afterAll(async () => {
      await adapter?.stop();
      await discord?.close();
    });

    it("lets @everyone, @here and roles ping when allowed; named users still never do", async () => {
      const ask = discord.sendMessage({ channelId: general, author: alice, content: `<@${discord.bot.id}> when is the deploy?` });
      const answer = await waitFor(() => discord.posts.find((p) => p.replyTo === ask.id), "the answer", 15_000);
      expect(answer.content).toBe(ANSWER);
      expect(answer.allowedMentions).toEqual({ parse: ["everyone", "roles"], replied_user: true });
    });
  });
});
