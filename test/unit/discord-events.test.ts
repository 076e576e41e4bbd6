import { describe, expect, it } from "vitest";
import { OAuth2Scopes, PermissionsBitField } from "discord.js";
import { COMMANDS } from "../../src/ground/commands.ts";
import { BUTTON_ONLY, slashCommand, slashCommands, SLASH_COMMAND } from "../../src/platforms/discord/commands/slash.ts";
import { WHY_MENU } from "../../src/platforms/discord/commands/why-menu.ts";
import { attachmentNote, decide, dmWorkspace, EMPTY_FACTS, stripBotMention, type MessageFacts } from "../../src/platforms/discord/events.ts";
import { inviteUrl, REQUIRED_PERMISSIONS } from "../../src/platforms/discord/install.ts";
import { rawDmReaction } from "../../src/platforms/discord/reactions.ts";

const BOT = "1100000000000000001";
const ROLE = "1100000000000000002";
const facts = (f: Partial<MessageFacts>): MessageFacts => ({ ...EMPTY_FACTS, text: "hello", ...f });

describe("which Discord messages are turns", () => {
  it("answers every DM, and guild messages that mention or reply to cairn", () => {
    expect(decide(facts({ isDm: true }))).toEqual({ kind: "turn", trigger: "dm" });
    expect(decide(facts({ mentionsBot: true }))).toEqual({ kind: "turn", trigger: "mention" });
    expect(decide(facts({ repliesToBot: true }))).toEqual({ kind: "turn", trigger: "reply" });
    expect(decide(facts({}))).toEqual({ kind: "ignore", reason: "not_addressed" });
  });

  it("follows a thread it is in, and only then", () => {
    expect(decide(facts({ inThread: true, followed: true }))).toEqual({ kind: "turn", trigger: "thread" });
    expect(decide(facts({ inThread: true }))).toEqual({ kind: "ignore", reason: "not_addressed" });
    // "followed" means nothing outside a thread: the channel main line needs a mention or a reply.
    expect(decide(facts({ followed: true }))).toEqual({ kind: "ignore", reason: "not_addressed" });
  });

  it("never takes a turn for bots or system messages, even addressed", () => {
    expect(decide(facts({ fromBot: true, isDm: true }))).toEqual({ kind: "ignore", reason: "bot" });
    expect(decide(facts({ fromBot: true, mentionsBot: true }))).toEqual({ kind: "ignore", reason: "bot" });
    expect(decide(facts({ system: true, mentionsBot: true }))).toEqual({ kind: "ignore", reason: "system" });
  });

  it("answers textless messages addressed to it with a notice, and ignores them in followed threads", () => {
    expect(decide(facts({ isDm: true, text: "", files: 1 }))).toEqual({ kind: "notice", trigger: "dm", notice: "attachments_only" });
    expect(decide(facts({ repliesToBot: true, text: "  ", files: 2 }))).toEqual({ kind: "notice", trigger: "reply", notice: "attachments_only" });
    expect(decide(facts({ mentionsBot: true, text: "" }))).toEqual({ kind: "notice", trigger: "mention", notice: "empty" });
    expect(decide(facts({ inThread: true, followed: true, text: "", files: 1 }))).toEqual({ kind: "ignore", reason: "no_text_in_thread" });
  });
});

describe("mention stripping", () => {
  it("removes cairn's user and role mentions, in every form, and the gap they leave", () => {
    expect(stripBotMention(`<@${BOT}> what is up?`, BOT, null)).toBe("what is up?");
    expect(stripBotMention(`<@!${BOT}>, what is up?`, BOT, null)).toBe("what is up?");
    expect(stripBotMention(`hey <@&${ROLE}> can you   help`, BOT, ROLE)).toBe("hey can you help");
    expect(stripBotMention(`ask <@${BOT}>`, BOT, null)).toBe("ask");
    expect(stripBotMention(`<@${BOT}>`, BOT, null)).toBe("");
  });

  it("keeps other mentions and the text's own line breaks", () => {
    expect(stripBotMention(`<@${BOT}> ask <@123456789012345678>\nabout <#223456789012345678>`, BOT, null)).toBe(
      "ask <@123456789012345678>\nabout <#223456789012345678>",
    );
  });

  it("names attachments cairn cannot read", () => {
    expect(attachmentNote([])).toBe("");
    expect(attachmentNote(["a.png", "b.pdf"])).toBe("\n[attached, not readable by cairn: a.png, b.pdf]");
  });
});

describe("raw DM reactions (the ones discord.js drops)", () => {
  const packet = (d: Record<string, unknown>, t = "MESSAGE_REACTION_ADD") => ({ op: 0, s: 9, t, d });
  const base = { user_id: "300000000000000001", channel_id: "300000000000000002", message_id: "300000000000000003", emoji: { id: null, name: "👍" } };
  const uncached = () => false;

  it("becomes a feedback event for an uncached DM channel", () => {
    const at = new Date("2025-01-01T00:00:00Z");
    expect(rawDmReaction(packet(base), BOT, uncached, at)).toEqual({
      platform: "discord",
      workspace: { externalId: dmWorkspace(base.user_id) },
      reactor: { externalId: base.user_id, isBot: false },
      channel: { externalId: base.channel_id, isDm: true },
      targetMessageId: base.message_id,
      emoji: "👍",
      action: "added",
      at,
    });
    expect(rawDmReaction(packet({ ...base, emoji: { id: "400000000000000001", name: null } }, "MESSAGE_REACTION_REMOVE"), BOT, uncached)).toMatchObject({
      emoji: "400000000000000001",
      action: "removed",
    });
    // A skin tone or variation selector is the same signal: the core gets the bare character.
    expect(rawDmReaction(packet({ ...base, emoji: { id: null, name: "👎🏽" } }), BOT, uncached)).toMatchObject({ emoji: "👎" });
    expect(rawDmReaction(packet({ ...base, emoji: { id: null, name: "❤️" } }), BOT, uncached)).toMatchObject({ emoji: "❤" });
  });

  it("is left to discord.js for guilds and cached channels, and ignored for cairn's own and malformed packets", () => {
    expect(rawDmReaction(packet({ ...base, guild_id: "300000000000000009" }), BOT, uncached)).toBeNull();
    expect(rawDmReaction(packet(base), BOT, () => true)).toBeNull();
    expect(rawDmReaction(packet({ ...base, user_id: BOT }), BOT, uncached)).toBeNull();
    expect(rawDmReaction(packet(base, "MESSAGE_CREATE"), BOT, uncached)).toBeNull();
    expect(rawDmReaction(packet({ ...base, message_id: 5 }), BOT, uncached)).toBeNull();
    expect(rawDmReaction(null, BOT, uncached)).toBeNull();
  });
});

describe("install and registration", () => {
  it("asks for exactly the permissions the adapter uses", () => {
    expect(REQUIRED_PERMISSIONS).toBe(277025459200n);
    expect(new PermissionsBitField(REQUIRED_PERMISSIONS).toArray().sort()).toEqual(
      ["ReadMessageHistory", "SendMessages", "SendMessagesInThreads", "UseApplicationCommands", "ViewChannel"].sort(),
    );
  });

  it("builds the invite URL with the bot and applications.commands scopes", () => {
    const url = new URL(inviteUrl("123456789012345678"));
    expect(url.origin + url.pathname).toBe("https://discord.com/oauth2/authorize");
    expect(url.searchParams.get("client_id")).toBe("123456789012345678");
    expect(url.searchParams.get("scope")).toBe(`${OAuth2Scopes.Bot} ${OAuth2Scopes.ApplicationsCommands}`);
    expect(url.searchParams.get("permissions")).toBe("277025459200");
    expect(url.search).toContain("scope=bot%20applications.commands");
  });

  it("registers one /cairn command with a subcommand per core command, and the message menu's Why this answer?, for guilds and the bot's DMs", () => {
    const [chat, menu, ...rest] = slashCommands();
    expect(rest).toHaveLength(0);
    expect(menu).toEqual({ name: WHY_MENU, type: 3, contexts: [0, 1], integration_types: [0] });
    const cmd = slashCommand();
    expect(chat).toEqual(cmd);
    expect(cmd).toMatchObject({ name: SLASH_COMMAND, contexts: [0, 1], integration_types: [0] });
    expect(cmd!.options?.map((o) => o.name)).toEqual(COMMANDS.filter((c) => !BUTTON_ONLY.has(c)));
    for (const o of cmd!.options ?? []) expect(o.description.length).toBeLessThanOrEqual(100);
  });
});
