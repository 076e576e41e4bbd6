/**
 * The pure parts of channel knowledge on Discord: a message as knowledge (what is kept, how it
 * reads, where its link goes), the backfill's cursors, and which channels are never listened in.
 * The adapter's live events, history, and who may read are tested end to end against the fake
 * Discord (test/e2e/discord-knowledge.test.ts).
 */
import { describe, expect, it } from "vitest";
import { ChannelType } from "discord.js";
import { channelMessage, readableText, type Names } from "../../src/platforms/discord/knowledge/message.ts";
import { WireMessage } from "../../src/platforms/discord/knowledge/wire.ts";
import { formatCursor, parseCursor } from "../../src/platforms/discord/knowledge/history.ts";
import { kindOf } from "../../src/platforms/discord/knowledge/channel-kind.ts";

const GUILD = "1100000000000000001";
const CHANNEL = "1100000000000000002";
const THREAD = "1100000000000000003";
const NAMES: Names = { role: (id) => (id === "77" ? "planners" : undefined), channel: (id) => (id === "88" ? "plans" : undefined) };

const wire = (extra: Record<string, unknown> = {}) =>
  WireMessage.parse({
    id: "1200000000000000001",
    channel_id: CHANNEL,
    author: { id: "55", username: "dana", global_name: "Dana" },
    content: "hello",
    timestamp: "2025-03-01T10:00:00.000Z",
    type: 0,
    ...extra,
  });

describe("a Discord message as channel knowledge", () => {
  it("keeps what a person said, with its author, time and message URL", () => {
    expect(channelMessage(wire(), { guild: GUILD, channel: CHANNEL, threadId: null }, NAMES)).toEqual({
      platform: "discord",
      workspace: { externalId: GUILD },
      channel: CHANNEL,
      messageId: "1200000000000000001",
      threadId: null,
      author: { externalId: "55", displayName: "Dana", isBot: false },
      text: "hello",
      sentAt: new Date("2025-03-01T10:00:00.000Z"),
      link: `https://discord.com/channels/${GUILD}/${CHANNEL}/1200000000000000001`,
    });
  });

  it("puts a thread's message under its channel, linked into the thread; prefers the member's nickname", () => {
    const m = channelMessage(wire({ type: 19, member: { nick: "D." } }), { guild: GUILD, channel: CHANNEL, threadId: THREAD }, NAMES);
    expect(m).toMatchObject({ channel: CHANNEL, threadId: THREAD, link: `https://discord.com/channels/${GUILD}/${THREAD}/1200000000000000001`, author: { displayName: "D." } });
  });

  it("leaves system notices out and marks bots and webhooks", () => {
    expect(channelMessage(wire({ type: 7 }), { guild: GUILD, channel: CHANNEL, threadId: null }, NAMES)).toBeNull();
    expect(channelMessage(wire({ type: 21 }), { guild: GUILD, channel: CHANNEL, threadId: null }, NAMES)).toBeNull();
    expect(channelMessage(wire({ author: { id: "9", username: "ci", bot: true } }), { guild: GUILD, channel: CHANNEL, threadId: null }, NAMES)?.author.isBot).toBe(true);
    expect(channelMessage(wire({ webhook_id: "66" }), { guild: GUILD, channel: CHANNEL, threadId: null }, NAMES)?.author.isBot).toBe(true);
  });

  it("reads mentions and custom emoji as names, and leaves unknown ones as Discord wrote them", () => {
    const mentions = WireMessage.shape.mentions.parse([{ id: "55", username: "dana", global_name: "Dana" }]);
    expect(readableText("<@55> and <@!55>, <@&77> in <#88> <:wave:123> <a:dance:456>; <@99> <@&98> <#97>", mentions, NAMES)).toBe(
      "@Dana and @Dana, @planners in #plans :wave: :dance:; <@99> <@&98> <#97>",
    );
  });
});

describe("the backfill's cursor", () => {
  it("is a bare message id in the channel, thread:<id>[:<message id>] in a thread", () => {
    expect(parseCursor(null)).toEqual({ thread: null, before: null });
    for (const c of [{ thread: null, before: "1200" }, { thread: THREAD, before: null }, { thread: THREAD, before: "1300" }]) expect(parseCursor(formatCursor(c))).toEqual(c);
    expect(formatCursor({ thread: THREAD, before: "1300" })).toBe(`thread:${THREAD}:1300`);
    expect(() => parseCursor("42.1")).toThrow(/not a Discord history cursor/);
  });
});

describe("where cairn listens", () => {
  it("never in DMs or group DMs; everything in a guild is a channel", () => {
    expect(kindOf(ChannelType.DM)).toBe("dm");
    expect(kindOf(ChannelType.GroupDM)).toBe("group_dm");
    for (const t of [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildForum, ChannelType.PublicThread]) expect(kindOf(t)).toBe("channel");
  });
});
