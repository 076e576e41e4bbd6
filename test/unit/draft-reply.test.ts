/**
 * The core's post-and-edit draft on its own, over Slack's reply target: the real Web API client
 * against the fake Slack, driven with status and text the way a turn calls them, so draft timing
 * and rendering can be pinned down.
 */
import { webApi } from "@slack/bolt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chunkText } from "../../src/ground/chunk.ts";
import { DraftReply, statusLine } from "../../src/delivery/draft.ts";
import { SLACK_CHUNK_LIMIT } from "../../src/platforms/slack/replies/chunk.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { placeTarget } from "../../src/platforms/slack/replies/target.ts";
import { BOT_TOKEN, captureLogger, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";

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
  channel = `CREPLY${++n}`;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const APOLOGY = "Sorry, I couldn't post that.";
const chunkMrkdwn = (text: string, limit = SLACK_CHUNK_LIMIT) => chunkText(text, { maxChars: limit, maxLines: Number.POSITIVE_INFINITY });

function writer(minUpdateMs: number, chunkLimit?: number) {
  const logs = captureLogger();
  const w = new DraftReply(placeTarget(client, channel, "1700000000.000001"), {
    render: toMrkdwn,
    chunk: (text) => chunkMrkdwn(text, chunkLimit),
    minUpdateMs,
    apology: APOLOGY,
    log: logs.log,
  });
  return { w, logs };
}

/** Every text the writer put on screen, in order: [method, text]. */
const shown = () =>
  slack.calls.filter((c) => c.ok && c.args.channel === channel && c.method.startsWith("chat.")).map((c) => [c.method, String(c.args.text ?? c.args.ts)] as const);
const thread = () => slack.messages(channel).map((m) => m.text);

describe("DraftReply", () => {
  it("posts a short answer once when it is done before the first draft is due", async () => {
    const { w } = writer(200);
    w.text("Deploys go out ");
    w.text("on **Tuesdays**.");
    const { posted, failed } = await w.finish("Deploys go out on **Tuesdays**.");
    expect(failed).toBe(false);
    expect(shown()).toEqual([["chat.postMessage", "Deploys go out on *Tuesdays*."]]);
    expect(posted).toEqual(slack.messages(channel).map((m) => m.ts));
  });

  it("shows a draft with its open code fence closed, and replaces it with the final answer", async () => {
    const { w } = writer(30);
    w.text("Run this:\n\n```sh\nnpm ci\nnpm run");
    await waitUntil("the first draft", () => shown().length === 1);
    expect(shown()[0]).toEqual(["chat.postMessage", "Run this:\n\n```\nnpm ci\nnpm run\n```"]);
    w.text(" build\n```\n\nThen deploy.");
    await waitUntil("an edit", () => shown().length === 2);
    const final = "Run this:\n\n```sh\nnpm ci\nnpm run build\n```\n\nThen deploy.";
    const { posted } = await w.finish(final);
    expect(thread()).toEqual([toMrkdwn(final)]);
    expect(posted).toHaveLength(1);
    // The last draft already showed the whole answer: no edit that changes nothing.
    expect(shown().filter(([m]) => m === "chat.update")).toHaveLength(1);
  });

  it("keeps one working message: status, preamble dropped for the next status, then the answer", async () => {
    const { w } = writer(20);
    w.progress("searching history");
    await waitUntil("status", () => shown().length === 1);
    w.text("Let me also check the skills.");
    await waitUntil("preamble", () => thread()[0] === "Let me also check the skills.");
    w.reset();
    w.progress("reading skills");
    await waitUntil("second status", () => thread()[0] === toMrkdwn(statusLine("reading skills")));
    w.text("Two skills match.");
    await waitUntil("answer draft", () => thread()[0] === "Two skills match.");
    await w.finish("Two skills match.");
    expect(shown().map(([m]) => m)).toEqual(["chat.postMessage", "chat.update", "chat.update", "chat.update"]);
    expect(thread()).toEqual(["Two skills match."]);
  });

  it("coalesces a fast stream into edits at most once per interval, spilling long drafts into more messages", async () => {
    const interval = 100;
    const { w } = writer(interval, 200);
    const words = Array.from({ length: 120 }, (_, i) => `word${i}`);
    const started = Date.now();
    for (const word of words) {
      w.text(`${word} `);
      await sleep(5);
    }
    const elapsed = Date.now() - started;
    const answer = words.join(" ");
    const { posted } = await w.finish(answer);
    const expected = chunkMrkdwn(toMrkdwn(answer), 200);
    expect(expected.length).toBeGreaterThan(3);
    expect(thread()).toEqual(expected);
    expect(posted).toEqual(slack.messages(channel).map((m) => m.ts));
    // Each flush edits or posts at most the last two parts (the one that filled up, the new one).
    const calls = shown().length;
    expect(calls - expected.length).toBeLessThanOrEqual(2 * (Math.floor(elapsed / interval) + 1));
    expect(calls).toBeLessThan(words.length / 2);
  });

  it("deletes draft parts the final text does not need, and counts only what stays", async () => {
    const { w } = writer(10, 100);
    w.text(Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n"));
    await waitUntil("a long draft", () => thread().length >= 3);
    slack.failNext("chat.delete", "cant_delete_message");
    const { posted } = await w.finish("Sorry, I lost my train of thought.");
    const kept = slack.messages(channel);
    // One delete refused: that part stays, and belongs to the reply.
    expect(kept).toHaveLength(2);
    expect(kept[0]!.text).toBe("Sorry, I lost my train of thought.");
    expect(posted).toEqual(kept.map((m) => m.ts));
  });

  it("apologises over the working messages when the platform refuses the answer", async () => {
    const { w } = writer(10, 100);
    const draft = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    w.text(draft);
    const parts = chunkMrkdwn(toMrkdwn(draft), 100).length;
    await waitUntil("the whole draft", () => thread().length === parts);
    slack.failNext("chat.update", "msg_too_long");
    slack.failNext("chat.postMessage", "msg_too_long");
    const { posted, failed } = await w.finish("The answer.");
    expect(failed).toBe(true);
    expect(posted).toEqual([]);
    expect(thread()).toEqual([APOLOGY]);
    w.text("late delta");
    await sleep(30);
    expect(thread()).toEqual([APOLOGY]);
  });

  it("cancels: a draft nobody needs is taken down", async () => {
    const { w } = writer(10);
    w.progress("searching history");
    await waitUntil("status", () => thread().length === 1);
    await w.cancel();
    expect(thread()).toEqual([]);
  });
});
