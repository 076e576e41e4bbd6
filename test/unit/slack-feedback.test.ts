/**
 * The feedback buttons' parts on their own: which texts get them and how they are built, the
 * surface that puts them on the last part of an answer (the real Web API client against the fake
 * Slack), and a click payload to the core's FeedbackEvent.
 */
import { webApi } from "@slack/bolt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chunkText } from "../../src/ground/chunk.ts";
import { MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { toClickFeedback } from "../../src/platforms/slack/feedback/action.ts";
import { FEEDBACK_ACTION_ID, feedbackBlocks } from "../../src/platforms/slack/feedback/buttons.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { AnswerSurface } from "../../src/platforms/slack/replies/surface.ts";
import { placeTarget, type SlackPlace } from "../../src/platforms/slack/replies/target.ts";
import { BOT_TOKEN, blockActions, captureLogger, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";

const bot = { userId: "UBOT", botId: "BBOT", teamId: "T1", name: "cairn" };
const fenceCount = (text: string) => text.split("```").length - 1;

describe("feedbackBlocks", () => {
  it("shows the text in one mrkdwn section with the buttons under it", () => {
    const blocks = feedbackBlocks("Hello *Alice*");
    expect(blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: "Hello *Alice*" } },
      {
        type: "context_actions",
        elements: [
          {
            type: "feedback_buttons",
            action_id: FEEDBACK_ACTION_ID,
            positive_button: { text: { type: "plain_text", text: "Good answer" }, value: "positive" },
            negative_button: { text: { type: "plain_text", text: "Not right" }, value: "negative" },
          },
        ],
      },
    ]);
  });

  it("splits a text over 3,000 characters into sections within the limit, code fences closed", () => {
    const code = Array.from({ length: 160 }, (_, i) => `line_${i} = step(${i})`).join("\n");
    const text = `Intro.\n\n\`\`\`\n${code}\n\`\`\`\n\nOutro.`;
    expect(text.length).toBeGreaterThan(3000);
    expect(text.length).toBeLessThanOrEqual(3500);
    const sections = feedbackBlocks(text).slice(0, -1) as { type: string; text: { text: string } }[];
    expect(sections.length).toBe(2);
    for (const s of sections) {
      expect(s.type).toBe("section");
      expect(s.text.text.length).toBeLessThanOrEqual(3000);
      expect(fenceCount(s.text.text) % 2).toBe(0);
    }
    expect(sections.map((s) => s.text.text)).toEqual(chunkText(text, { maxChars: 3000, maxLines: Number.POSITIVE_INFINITY }));
  });
});

describe("toClickFeedback", () => {
  const click = (over: Partial<Parameters<typeof blockActions>[0]> = {}) =>
    blockActions({ teamId: "T1", user: "UA", channel: "D9", messageTs: "1700000001.000100", messageUser: "UBOT", actionId: FEEDBACK_ACTION_ID, value: "negative", actionTs: "1700000005.000200", ...over });

  it("maps a click on 'Not right' to an added 👎 with the button's fixed meaning, on that message", () => {
    expect(toClickFeedback(click(), bot)).toEqual({
      kind: "feedback",
      event: {
        platform: "slack",
        workspace: { externalId: "T1" },
        reactor: { externalId: "UA" },
        channel: { externalId: "D9", isDm: true },
        targetMessageId: "1700000001.000100",
        emoji: "👎",
        signal: "negative",
        action: "added",
        at: new Date(1700000005000.2),
      },
    });
    const positive = toClickFeedback(click({ value: "positive", channel: "C1" }), bot);
    expect(positive.kind === "feedback" && [positive.event.emoji, positive.event.signal, positive.event.channel]).toEqual(["👍", "positive", { externalId: "C1", isDm: false }]);
  });

  it("falls back to the container and the clicker's team (org-wide installs send team null)", () => {
    const { channel: _c, message: _m, ...rest } = click();
    const r = toClickFeedback({ ...rest, team: null }, bot);
    expect(r.kind === "feedback" && [r.event.workspace.externalId, r.event.channel.externalId, r.event.targetMessageId]).toEqual(["T1", "D9", "1700000001.000100"]);
  });

  it("drops clicks on someone else's message and malformed payloads", () => {
    expect(toClickFeedback(click({ messageUser: "UB" }), bot)).toMatchObject({ kind: "drop", reason: "not_on_bot_message", target: "1700000001.000100" });
    for (const body of [null, 42, {}, { ...click(), type: "view_submission" }, { ...click(), actions: [] }, { ...click(), user: {} }, click({ value: "maybe" }), click({ actionId: "other" }), click({ actionTs: "soon" })]) {
      expect(toClickFeedback(body, bot)).toMatchObject({ kind: "drop", reason: "malformed" });
    }
  });
});

describe("AnswerSurface", () => {
  let slack: FakeSlack;
  let client: webApi.WebClient;
  let channel: string;
  let n = 0;
  beforeAll(async () => {
    slack = await startFakeSlack();
    client = new webApi.WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await slack.close();
  });
  beforeEach(() => {
    slack.reset();
    channel = `CSURFACE${++n}`;
  });

  const surface = (chunkLimit = 3500) =>
    new AnswerSurface(placeTarget(client, channel, "1700000000.000001"), {
      render: toMrkdwn,
      chunk: (text) => chunkText(text, { maxChars: chunkLimit, maxLines: Number.POSITIVE_INFINITY }),
      minUpdateMs: 10,
      apology: "Sorry, I couldn't post that.",
      log: captureLogger().log,
    });
  /** Every post and edit in the channel: method, text, and whether it carried blocks (null: none sent). */
  const calls = () =>
    slack.calls
      .filter((c) => c.ok && c.args.channel === channel && (c.method === "chat.postMessage" || c.method === "chat.update"))
      .map((c) => [c.method, String(c.args.text), c.args.blocks === undefined ? null : (JSON.parse(String(c.args.blocks)) as unknown[]).length] as const);
  const stored = () => slack.messages(channel).map((m) => [m.text, m.blocks?.length ?? 0]);

  it("keeps the buttons off status lines and drafts, and puts them on the answer's edit", async () => {
    const s = surface();
    s.progress("searching history");
    await waitUntil("the status line", () => calls().length === 1);
    s.text("Deploys go out");
    await waitUntil("the draft", () => calls().length === 2);
    await s.finish("Deploys go out on **Tuesdays**.");
    expect(calls()).toEqual([
      ["chat.postMessage", "⏳ _searching history…_", null],
      ["chat.update", "Deploys go out", null],
      ["chat.update", "Deploys go out on *Tuesdays*.", 2],
    ]);
    expect(stored()).toEqual([["Deploys go out on *Tuesdays*.", 2]]);
  });

  it("adds the buttons by one more edit when the draft already shows the whole answer", async () => {
    const s = surface();
    s.text("Deploys go out on **Tuesdays**.");
    await waitUntil("the draft", () => calls().length === 1);
    const { posted } = await s.finish("Deploys go out on **Tuesdays**.");
    expect(calls()).toEqual([
      ["chat.postMessage", "Deploys go out on *Tuesdays*.", null],
      ["chat.update", "Deploys go out on *Tuesdays*.", 2],
    ]);
    expect(posted).toEqual(slack.messages(channel).map((m) => m.ts));
  });

  it("puts the buttons on the last part of a split answer, and none on a non-answer", async () => {
    const answer = "First paragraph, long enough for a part.\n\nSecond paragraph, long enough for a part.";
    const { posted } = await surface(64).finish(answer);
    expect(posted).toHaveLength(2);
    expect(stored()).toEqual([
      ["First paragraph, long enough for a part.", 0],
      ["Second paragraph, long enough for a part.", 2],
    ]);
    // The core says what is not an answer (an apology, a refusal, a limit): no buttons there.
    await surface().finish(MODEL_UNAVAILABLE_REPLY, "notice");
    expect(stored().at(-1)).toEqual([MODEL_UNAVAILABLE_REPLY, 0]);
  });

  it("takes the buttons off a message it edits to another text", async () => {
    // A stub place, to hold the draft's first post until the answer is being shown: the draft's
    // second part then goes up as the answer's last part is known, with the same text.
    const seen: [string, string, string, number | null][] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let next = 0;
    const place: SlackPlace = {
      channelId: "CSTUB",
      send: async (text, blocks) => {
        const ts = `t${++next}`;
        seen.push(["send", ts, text, blocks ? blocks.length : null]);
        if (next === 1) await gate;
        return ts;
      },
      edit: async (ts, text, blocks) => {
        seen.push(["edit", ts, text, blocks ? blocks.length : null]);
      },
      remove: async () => undefined,
    };
    const s = new AnswerSurface(place, { render: toMrkdwn, chunk: (t) => chunkText(t, { maxChars: 64, maxLines: Number.POSITIVE_INFINITY }), minUpdateMs: 10, apology: null, log: captureLogger().log });
    const [a, x, y, c] = ["Draft paragraph one, long enough for a part.", "Final paragraph one, long enough for a part.", "Final paragraph two, long enough for a part.", "The closing paragraph, long enough for a part."];
    s.text(`${a}\n\n${c}`);
    await waitUntil("the draft's first post", () => seen.length === 1);
    const finished = s.finish(`${x}\n\n${y}\n\n${c}`);
    release();
    await finished;
    expect(seen).toEqual([
      ["send", "t1", a, null],
      ["send", "t2", c, 2],
      ["edit", "t1", x, null],
      // It carried the buttons and shows another text now: an empty list takes them off.
      ["edit", "t2", y, 0],
      ["send", "t3", c, 2],
    ]);
  });
});
