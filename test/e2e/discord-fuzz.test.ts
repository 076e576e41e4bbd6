/**
 * Hostile Discord gateway payloads, generated: messages, reactions and interactions with fields
 * taken away or swapped for values of the wrong type, hostile text, deep nesting and prototype keys,
 * sent through the real discord.js client. None may end the process (discord.js threw on some of
 * them inside an async handler: unhandled rejections, which fail this file), and cairn still
 * answers a person afterwards.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { captureLogger, mulberry32 } from "../fakes/slack.ts";
import { hostileValues, mutate, type Json } from "../support/mutate.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import type { Core } from "../../src/app/core.ts";

const GUILD = snowflake();
const GENERAL = snowflake();
const alice: FakeUser = { id: snowflake(), username: "alice", globalName: "Alice" };

forEachDatabase("hostile Discord payloads", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  const logs = captureLogger("warn");

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: [{ id: GUILD, name: "Acme", channels: [{ id: GENERAL, name: "general" }], members: [alice] }] });
    core = makeCore(getDb(), anthropic);
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, logs.log);
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });

  it("survives generated malformed messages, reactions and interactions, and keeps answering", async () => {
    const rand = mulberry32(20261203);
    const hostile = hostileValues(rand);
    anthropic.setDefault(() => ({ text: "fuzzed answer" }));
    for (let i = 0; i < 80; i++) {
      // A real message, stored by the fake but not dispatched, as the template of a broken one.
      const template = discord.sendMessage({ channelId: i % 2 ? GENERAL : discord.dmChannel(alice), author: alice, content: `<@${discord.bot.id}> question ${i}`, offline: true });
      discord.dispatchRaw("MESSAGE_CREATE", mutate(template as unknown as Json, rand, hostile));
      discord.dispatchRaw(
        "MESSAGE_REACTION_ADD",
        mutate({ user_id: alice.id, channel_id: GENERAL, message_id: template.id, guild_id: GUILD, emoji: { id: null, name: "👎" }, type: 0, burst: false } as Json, rand, hostile),
      );
      discord.dispatchRaw("MESSAGE_UPDATE", mutate({ ...(template as unknown as Record<string, Json>), content: "edited" } as Json, rand, hostile));
      discord.dispatchRaw("MESSAGE_DELETE", mutate({ id: template.id, channel_id: GENERAL, guild_id: GUILD } as Json, rand, hostile));
      // The fake builds the interaction around a real person and channel; what cairn reads of it is broken.
      const interaction = mutate({ type: [2, 3, 5][i % 3]!, data: { id: snowflake(), name: "cairn", type: 1, custom_id: "cairn:view:1", options: [{ name: "me", type: 1, options: [] }] } }, rand, hostile);
      discord.sendInteraction({ ...(interaction as Record<string, unknown>), user_id: alice.id, channel_id: GENERAL });
    }
    // Still answering a well-formed mention, once the fuzzed events are through.
    anthropic.setDefault(() => ({ text: "Still here." }));
    const ask = discord.sendMessage({ channelId: GENERAL, author: alice, content: `<@${discord.bot.id}> are you there?` });
    const answer = await waitFor(() => discord.posts.find((p) => p.content === "Still here." && p.replyTo === ask.id), "the answer", 30_000);
    expect(answer.channelId).toBe(GENERAL);
    // discord.js could not build some of them at all: those were logged and skipped, one by one.
    expect(logs.find("malformed Discord event ignored").length).toBeGreaterThan(0);
  }, 240_000);
});
