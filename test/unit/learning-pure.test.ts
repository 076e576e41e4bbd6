/** The learning loop's pure parts: what a reaction means, and how a correction's distillation is checked. */
import { describe, expect, it } from "vitest";
import type Anthropic from "@anthropic-ai/sdk";
import { EmojiSignals } from "../../src/learning/emoji.ts";
import { bareEmoji } from "../../src/ground/emoji.ts";
import { slackEmoji } from "../../src/platforms/slack/emoji.ts";
import { FALLBACK_WORKSPACE_URL, permalink } from "../../src/platforms/slack/permalink.ts";
import { messageLink as discordLink } from "../../src/platforms/discord/link.ts";
import { distill, fallback, overlap } from "../../src/learning/distill.ts";
import { excerpt, parseCase } from "../../src/lessons/lesson-case.ts";
import { DEFAULT_LEARNING } from "../../src/learning/settings.ts";
import { fakeModel } from "../../bench/lib/model.ts";

describe("reactions", () => {
  // The core reads emoji as the adapters hand them (the character), and settings with the reader
  // the top gives it (Slack's names); a Slack reaction's name reaches it through the Slack adapter.
  const signals = new EmojiSignals(DEFAULT_LEARNING, slackEmoji);
  const fromSlack = (name: string) => signals.signal(slackEmoji(name));
  const fromDiscord = (char: string) => signals.signal(bareEmoji(char));

  it("reads Slack names, Discord characters, skin tones and variation selectors alike", () => {
    for (const e of ["-1", "thumbsdown", ":thumbsdown:", "-1::skin-tone-4", "👎", "x", "❌"]) expect(fromSlack(e), e).toBe("negative");
    for (const e of ["👎", "👎🏽", "❌"]) expect(fromDiscord(e), e).toBe("negative");
    for (const e of ["+1", "thumbsup", "white_check_mark", "✅", "star", "⭐", "tada", "🎉"]) expect(fromSlack(e), e).toBe("positive");
    for (const e of ["👍🏻", "✅", "⭐", "🎉"]) expect(fromDiscord(e), e).toBe("positive");
    for (const e of ["eyes", "heart", "thinking_face", ""]) expect(fromSlack(e), e).toBeNull();
    for (const e of ["👀", "❤️"]) expect(fromDiscord(e), e).toBeNull();
    expect(bareEmoji("❤️")).toBe(slackEmoji("heart"));
  });

  it("takes the settings in either spelling", () => {
    const custom = new EmojiSignals({ correctionEmoji: ["no_entry_sign"], positiveEmoji: ["❤️"] }, slackEmoji);
    expect(custom.signal(slackEmoji("🚫"))).toBe("negative");
    expect(custom.signal(slackEmoji("-1"))).toBeNull();
    expect(custom.signal(slackEmoji("heart"))).toBe("positive");
  });

  it("knows ✅ as an approval in both spellings", () => {
    expect(EmojiSignals.isApproval(slackEmoji("white_check_mark"))).toBe(true);
    expect(EmojiSignals.isApproval(bareEmoji("✅"))).toBe(true);
    expect(EmojiSignals.isApproval(slackEmoji("+1"))).toBe(false);
    // A queued job may carry the name (an earlier version queued Slack's names).
    expect(signals.approves("white_check_mark")).toBe(true);
    expect(signals.signal("thumbsdown")).toBe("negative");
  });
});

describe("distillation", () => {
  const input = {
    workspaceId: "ws-1",
    question: "how do I install deps?",
    wrongAnswer: "Run npm install.",
    correction: "No, we use pnpm: run pnpm install.",
    candidates: [
      { id: "L1", kind: "lesson", text: "ALWAYS run pnpm install, we use pnpm" },
      { id: "R1", kind: "rule", text: "ALWAYS install with npm" },
      { id: "L2", kind: "lesson", text: "ALWAYS deploy on Tuesdays" },
    ],
  };
  const answering = (text: string) => fakeModel(() => ({ text }), { record: true });

  it("takes the model's rule and the ids it names, when they are ones it was shown", async () => {
    const model = answering('Here: {"rule": "ALWAYS install dependencies with pnpm; NEVER npm.", "same_as": "L1", "contradicts": "R1"}');
    expect(await distill(model, "m", input)).toEqual({ rule: "ALWAYS install dependencies with pnpm; NEVER npm.", sameAs: "L1", contradicts: "R1", byModel: true });
    const prompt = JSON.stringify(model.requests[0]!.messages);
    expect(prompt).toContain("id L1 (lesson)");
    expect(prompt).toContain("Run npm install.");
  });

  it("drops ids it was not shown, and a contradiction of something that is not a team rule", async () => {
    const d = await distill(answering('{"rule": "NEVER use npm here, use pnpm.", "same_as": "L9", "contradicts": "L2"}'), "m", input);
    expect(d).toMatchObject({ sameAs: null, contradicts: null, byModel: true });
  });

  it("falls back to the correction's own words when the answer is unusable or the call fails", async () => {
    for (const bad of ["not json", '{"rule": "use pnpm"}', '{"rule": "ALWAYS"}', `{"rule": "ALWAYS ${"x ".repeat(200)}"}`]) {
      const d = await distill(answering(bad), "m", input);
      expect(d, bad).toMatchObject({ rule: "No, we use pnpm: run pnpm install.", byModel: false });
    }
    const failing = { create: async (): Promise<Anthropic.Message> => Promise.reject(new Error("down")) };
    expect(await distill(failing, "m", input)).toMatchObject({ byModel: false, sameAs: "L1" });
  });

  it("judges sameness by shared words without the model", () => {
    expect(fallback(input).sameAs).toBe("L1");
    expect(overlap("deploy on Tuesdays", "ALWAYS deploy on Tuesdays")).toBeGreaterThan(0.6);
    expect(overlap("pnpm install", "deploy on Tuesdays")).toBe(0);
  });
});

describe("a lesson's case", () => {
  it("cuts long texts at a word, and reads back only what fits its schema", () => {
    expect(excerpt("alpha beta gamma delta epsilon", 20)).toBe("alpha beta gamma…");
    expect(excerpt("short", 12)).toBe("short");
    expect(parseCase("{")).toBeNull();
    expect(parseCase(JSON.stringify({ question: 1 }))).toBeNull();
  });

  it("links to the message on its platform, a thread reply in its thread", () => {
    // The adapters give the link with the message (Inbound.link); the lesson keeps the stored one.
    const slackLink = (channel: string, ts: string, thread: string | null = null) => permalink(FALLBACK_WORKSPACE_URL, channel, ts, thread);
    expect(slackLink("C1", "1700000001.000200")).toBe("https://slack.com/archives/C1/p1700000001000200");
    expect(slackLink("C1", "1700000001.000200", "1700000000.000100")).toBe("https://slack.com/archives/C1/p1700000001000200?thread_ts=1700000000.000100&cid=C1");
    expect(discordLink("123", "456", "789")).toBe("https://discord.com/channels/123/456/789");
    expect(discordLink(null, "456", "789")).toBe("https://discord.com/channels/@me/456/789");
  });
});
