/** Which Slack message events are turns, and what the Inbound looks like. */
import { describe, expect, it } from "vitest";
import { classifyMessage, plainText, toInbound, type BotIdentity } from "../../src/platforms/slack/events.ts";
import { toFeedback } from "../../src/platforms/slack/feedback/reactions.ts";
import { conversationKey } from "../../src/history/store/store.ts";
import { RecentSet } from "../../src/ground/cache/recent-set.ts";

const bot: BotIdentity = { userId: "UBOT", botId: "BBOT", name: "cairn", teamId: "T1", teamName: "Team" };
const body = { team_id: "T1", event_id: "Ev1" };
const msg = (e: Record<string, unknown>) => ({ type: "message", channel: "C1", channel_type: "channel", user: "UA", text: "hi", ts: "1700000001.000100", ...e });

describe("classifyMessage", () => {
  it("makes every DM a turn, replying at the top level", () => {
    const c = classifyMessage(msg({ channel: "D1", channel_type: "im" }), body, bot);
    expect(c).toMatchObject({ kind: "dm", message: { isDm: true, threadId: null, replyThreadTs: undefined } });
  });

  it("maps message and app_mention of one post to the same conversation and message id", () => {
    const text = "<@UBOT> deploy?";
    const a = classifyMessage(msg({ text }), body, bot);
    const b = classifyMessage({ type: "app_mention", channel: "C1", user: "UA", text, ts: "1700000001.000100" }, body, bot);
    if (a.kind === "drop" || b.kind === "drop") throw new Error("expected turns");
    expect(a.kind).toBe("mention");
    expect(b.kind).toBe("mention");
    const [ia, ib] = [toInbound(a.message, {}, bot), toInbound(b.message, {}, bot)];
    expect(conversationKey(ia)).toBe(conversationKey(ib));
    expect(ia.messageId).toBe(ib.messageId);
    expect(ia).toMatchObject({ threadId: "1700000001.000100", text: "deploy?", workspace: { externalId: "T1", name: "Team" } });
    expect(conversationKey(ia)).toBe("slack:T1:C1:1700000001.000100");
  });

  it("replies in the thread of a threaded post and marks it as inside a thread", () => {
    const c = classifyMessage(msg({ thread_ts: "1700000000.000100" }), body, bot);
    expect(c).toMatchObject({ kind: "thread_reply", message: { threadId: "1700000000.000100", replyThreadTs: "1700000000.000100", inThread: true } });
  });

  it("drops unaddressed channel posts, bots, itself, edits, deletions and other subtypes", () => {
    const reason = (e: Record<string, unknown>) => {
      const c = classifyMessage(msg(e), body, bot);
      return c.kind === "drop" ? c.reason : c.kind;
    };
    expect(reason({})).toBe("not_addressed");
    expect(reason({ bot_id: "B2" })).toBe("bot");
    expect(reason({ subtype: "bot_message", bot_id: "B2" })).toBe("bot");
    expect(reason({ user: "UBOT", channel_type: "im" })).toBe("self");
    expect(reason({ subtype: "message_changed", message: {} })).toBe("edit");
    expect(reason({ subtype: "message_deleted" })).toBe("subtype");
    expect(reason({ subtype: "channel_join" })).toBe("subtype");
    expect(reason({ subtype: "thread_broadcast", thread_ts: "1.1" })).toBe("thread_reply");
    expect(reason({ subtype: "file_share", text: "", files: [{ name: "a.png" }], channel_type: "im" })).toBe("dm");
    expect(reason({ text: "<@UBOT>", channel_type: "im" })).toBe("empty");
    expect(reason({ ts: undefined })).toBe("malformed");
    expect(classifyMessage(msg({}), {}, bot)).toMatchObject({ kind: "drop", reason: "malformed" });
  });
});

describe("plainText", () => {
  it("removes the leading mention, names later ones, spells out links and decodes entities", () => {
    expect(plainText("<@UBOT>, compare <@UX> &amp; <https://a.io|A> with <https://b.io> &lt;3 <@UBOT|cairn>", bot)).toBe(
      "compare <@UX> & A (https://a.io) with https://b.io <3 @cairn",
    );
    expect(plainText("mail <mailto:a@b.io|a@b.io>", bot)).toBe("mail a@b.io");
  });
});

describe("toFeedback", () => {
  const reaction = (e: Record<string, unknown>) => ({ type: "reaction_added", user: "UA", reaction: "thumbsup::skin-tone-3", item_user: "UBOT", item: { type: "message", channel: "D9", ts: "1.2" }, event_ts: "1700000005.000200", ...e });
  it("maps a reaction on a bot message to a feedback event", () => {
    expect(toFeedback(reaction({}), body, bot)).toEqual({
      kind: "feedback",
      event: {
        platform: "slack",
        workspace: { externalId: "T1" },
        reactor: { externalId: "UA" },
        channel: { externalId: "D9", isDm: true },
        targetMessageId: "1.2",
        // Slack's name, skin tone and all, reaches the core as the character.
        emoji: "👍",
        action: "added",
        at: new Date(1700000005000.2),
      },
    });
    expect(toFeedback(reaction({ type: "reaction_removed" }), body, bot)).toMatchObject({ event: { action: "removed" } });
  });
  it("ignores reactions on files and on other people's messages", () => {
    expect(toFeedback(reaction({ item: { type: "file", file: "F1" } }), body, bot)).toMatchObject({ kind: "drop", reason: "not_a_message" });
    expect(toFeedback(reaction({ item_user: "UA" }), body, bot)).toMatchObject({ kind: "drop", reason: "not_on_bot_message" });
    expect(toFeedback(reaction({ event_ts: undefined }), body, bot)).toMatchObject({ kind: "drop", reason: "malformed" });
  });
});

describe("RecentSet", () => {
  it("forgets after the TTL and holds at most max keys", () => {
    let now = 0;
    const set = new RecentSet(100, 3, () => now);
    expect(set.addIfNew("a")).toBe(true);
    expect(set.addIfNew("a")).toBe(false);
    now = 150;
    expect(set.has("a")).toBe(false);
    for (const k of ["b", "c", "d", "e"]) set.add(k);
    expect(set.size).toBe(3);
    expect(set.has("b")).toBe(false);
    expect(set.has("e")).toBe(true);
  });
});
