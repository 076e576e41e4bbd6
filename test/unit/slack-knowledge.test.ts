/** Which Slack events become channel events for the core (knowledge/observe.ts), and how a message and its permalink look (knowledge/channel-message.ts, permalink.ts). */
import { describe, expect, it } from "vitest";
import { observed } from "../../src/platforms/slack/knowledge/observe.ts";
import { channelMessage, SlackMessageSchema } from "../../src/platforms/slack/knowledge/channel-message.ts";
import { permalink, workspaceUrl } from "../../src/platforms/slack/permalink.ts";
import type { BotIdentity } from "../../src/platforms/slack/events.ts";

const bot: BotIdentity = { userId: "UBOT", botId: "BBOT", name: "cairn", teamId: "T1", url: "https://acme.slack.com/" };
const body = { team_id: "T1", event_id: "Ev1" };
const msg = (e: Record<string, unknown> = {}) => ({ type: "message", channel: "C1", channel_type: "channel", user: "UA", text: "hi", ts: "1700000001.000100", ...e });
const names = { get: async (user: string) => ({ displayName: `name of ${user}`, isBot: user === "UINTEGRATION" }) };

describe("permalink", () => {
  it("builds Slack's permalink from the workspace URL, with the thread for a reply", () => {
    expect(permalink("https://acme.slack.com/", "C1", "1700000001.000100")).toBe("https://acme.slack.com/archives/C1/p1700000001000100");
    expect(permalink("https://acme.slack.com", "C1", "1700000002.000200", "1700000001.000100")).toBe(
      "https://acme.slack.com/archives/C1/p1700000002000200?thread_ts=1700000001.000100&cid=C1",
    );
    // A thread's first message is a channel message: no thread in its link.
    expect(permalink("https://acme.slack.com/", "C1", "1700000001.000100", "1700000001.000100")).toBe("https://acme.slack.com/archives/C1/p1700000001000100");
    expect(workspaceUrl(undefined)).toBe("https://slack.com/");
  });
});

describe("observed", () => {
  it("sends people's channel messages, thread replies and mentions, with the workspace of the envelope", () => {
    expect(observed(msg(), body, bot)).toMatchObject({ kind: "message", place: { workspace: "T1", channel: "C1" }, message: { ts: "1700000001.000100" } });
    expect(observed(msg({ thread_ts: "1700000000.000100", channel_type: "group", channel: "G1" }), body, bot)).toMatchObject({ kind: "message", place: { channel: "G1" } });
    // app_mention carries no channel_type.
    expect(observed({ type: "app_mention", channel: "C1", user: "UA", text: "<@UBOT> hi", ts: "1700000001.000100" }, body, bot)).toMatchObject({ kind: "message" });
    for (const subtype of ["thread_broadcast", "file_share", "me_message"]) expect(observed(msg({ subtype }), body, bot)?.kind).toBe("message");
  });

  it("never sends DMs, group DMs, bots, cairn itself, or what is not a person saying something", () => {
    const none = [
      msg({ channel: "D1", channel_type: "im" }),
      msg({ channel: "G9", channel_type: "mpim" }),
      msg({ channel: "D1", channel_type: "app_home" }),
      { type: "app_mention", channel: "D1", user: "UA", text: "hi", ts: "1700000001.000100" },
      msg({ bot_id: "B1", subtype: "bot_message" }),
      msg({ bot_profile: { name: "deploy" } }),
      msg({ user: "UBOT" }),
      msg({ subtype: "channel_join" }),
      msg({ subtype: "channel_topic" }),
      msg({ user: undefined }),
      msg({ ts: "not a ts" }),
      { type: "reaction_added", user: "UA" },
    ];
    for (const event of none) expect(observed(event, body, bot), JSON.stringify(event)).toBeNull();
    expect(observed(msg(), { event_id: "no team" }, bot)).toBeNull();
  });

  it("makes message_changed an edit with the new text, a tombstone and message_deleted a deletion", () => {
    const changed = { type: "message", subtype: "message_changed", channel: "C1", channel_type: "channel", ts: "1700000009.000100", message: { type: "message", user: "UA", text: "new &amp; <https://x.example|better>", ts: "1700000001.000100", edited: { user: "UA", ts: "1700000009.000100" } } };
    expect(observed(changed, body, bot)).toEqual({ kind: "event", event: { kind: "edit", platform: "slack", workspace: { externalId: "T1" }, channel: "C1", messageId: "1700000001.000100", text: "new & better (https://x.example)" } });
    expect(observed({ ...changed, channel: "D1", channel_type: "im" }, body, bot)).toBeNull();
    expect(observed({ ...changed, message: { ...changed.message, user: undefined, bot_id: "B1" } }, body, bot)).toBeNull();
    const tombstone = { ...changed, message: { type: "message", subtype: "tombstone", text: "This message was deleted.", ts: "1700000001.000100", thread_ts: "1700000001.000100" } };
    expect(observed(tombstone, body, bot)).toMatchObject({ event: { kind: "delete", messageId: "1700000001.000100" } });
    const deleted = { type: "message", subtype: "message_deleted", channel: "C1", channel_type: "channel", ts: "1700000009.000100", deleted_ts: "1700000001.000100" };
    expect(observed(deleted, body, bot)).toMatchObject({ event: { kind: "delete", channel: "C1", messageId: "1700000001.000100" } });
  });

  it("sends people joining and leaving a channel", () => {
    expect(observed({ type: "member_joined_channel", user: "UA", channel: "C1", channel_type: "C", team: "T1", inviter: "UB" }, body, bot)).toMatchObject({
      event: { kind: "member", channel: "C1", user: "UA", joined: true },
    });
    expect(observed({ type: "member_left_channel", user: "UA", channel: "G1", channel_type: "G", team: "T1" }, body, bot)).toMatchObject({ event: { kind: "member", joined: false } });
    expect(observed({ type: "member_joined_channel", user: "UBOT", channel: "C1", channel_type: "C", team: "T1" }, body, bot)).toBeNull();
  });
});

describe("channelMessage", () => {
  const place = { workspace: "T1", channel: "C1", bot };
  const parse = (e: Record<string, unknown>) => SlackMessageSchema.parse(msg(e));

  it("maps a message with its author's name, time, thread and permalink; cairn's mention and Slack's markup made plain", async () => {
    const m = await channelMessage(parse({ text: "<@UBOT> deploy at 5 &gt; 4", thread_ts: "1700000000.000100", files: [{ name: "plan.pdf" }] }), place, names);
    expect(m).toEqual({
      platform: "slack",
      workspace: { externalId: "T1" },
      channel: "C1",
      messageId: "1700000001.000100",
      threadId: "1700000000.000100",
      author: { externalId: "UA", displayName: "name of UA" },
      text: "deploy at 5 > 4\n[shared files: plan.pdf]",
      sentAt: new Date(1700000001000),
      link: "https://acme.slack.com/archives/C1/p1700000001000100?thread_ts=1700000000.000100&cid=C1",
    });
    // A thread's first message is in the channel itself.
    expect(await channelMessage(parse({ thread_ts: "1700000001.000100", reply_count: 3 }), place, names)).toMatchObject({ threadId: null, link: "https://acme.slack.com/archives/C1/p1700000001000100" });
  });

  it("marks a user account that is a bot, and leaves out empty texts and what is not a person's", async () => {
    expect((await channelMessage(parse({ user: "UINTEGRATION" }), place, names))?.author).toMatchObject({ isBot: true });
    expect(await channelMessage(parse({ text: "  " }), place, names)).toBeNull();
    expect(await channelMessage(parse({ subtype: "channel_join" }), place, names)).toBeNull();
    expect(await channelMessage(parse({ user: "UBOT" }), place, names)).toBeNull();
  });
});
