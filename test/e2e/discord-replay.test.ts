/**
 * Discord never delivers a gateway event again: a message an earlier process kept in its journal
 * and never stored is read again over REST at the next start and answered once; one deleted
 * meanwhile is dropped. The real Discord adapter against the fake Discord, the real Core.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { TEST_SETTINGS } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { Core } from "../../src/app/core.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { FileJournal } from "../../src/journal/file-journal.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";

const GUILD = snowflake();
const GENERAL = snowflake();
const alice: FakeUser = { id: snowflake(), username: "alice", globalName: "Alice" };

forEachDatabase("discord: kept messages replayed after a restart", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let dir: string;
  let adapter: DiscordAdapter | null = null;
  let core: Core | null = null;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: "Answered after the restart." });
    discord = await startFakeDiscord({ guilds: [{ id: GUILD, name: "Acme", channels: [{ id: GENERAL, name: "general" }], members: [alice] }] });
    dir = mkdtempSync(join(tmpdir(), "cairn-discord-replay-"));
  });
  afterAll(async () => {
    await adapter?.stop();
    await core?.journal.close();
    await Promise.all([discord?.close(), anthropic?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a kept message once at the next start, and drops one deleted meanwhile", async () => {
    // What a process killed before storing left: two mentions in its journal, never answered.
    const kept = discord.sendMessage({ channelId: GENERAL, author: alice, content: `<@${discord.bot.id}> what is the deploy day?`, offline: true });
    // Deleted before the restart: Discord answers "Unknown Message" for it.
    const gone = { id: snowflake() };
    const earlier = await FileJournal.open(dir);
    for (const m of [kept, gone]) await earlier.journal.append("discord", m.id, { order: `discord:${GENERAL}`, payload: { channelId: GENERAL, messageId: m.id } });
    await earlier.journal.close();

    const opened = await FileJournal.open(dir);
    expect(opened.pending).toHaveLength(2);
    const model = createModelClient({ apiKey: anthropic.apiKey, baseURL: anthropic.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
    core = new Core({ database: getDb(), model, settings: TEST_SETTINGS, log: silentLogger, journal: { backend: opened.journal, pending: opened.pending } });
    await core.start();
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { typingIntervalMs: 40 });
    const answer = await waitFor(() => discord.posts.find((p) => p.replyTo === kept.id), "the kept message's answer", 15_000);
    expect(answer.content).toBe("Answered after the restart.");
    await waitFor(() => core!.journal.depth === 0 || undefined, "the journal emptied", 15_000);
    expect(discord.posts.filter((p) => p.replyTo === kept.id)).toHaveLength(1);
    expect(discord.posts.some((p) => p.replyTo === gone.id)).toBe(false);
    expect(await getDb().prisma.message.count({ where: { platformId: kept.id, role: "user" } })).toBe(1);
    expect(await getDb().prisma.message.count({ where: { platformId: gone.id } })).toBe(0);
  });
});
