/**
 * A person's channels for the Home tab (home/membership.ts): the real Web API client against the fake
 * Slack's users.conversations, with the cache's clock in the test's hands (no waiting).
 */
import { webApi } from "@slack/bolt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChannelMembership, MEMBERSHIP_TTL_MS } from "../../src/platforms/slack/home/membership.ts";
import { BOT_TOKEN, captureLogger, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";

describe("ChannelMembership", () => {
  let slack: FakeSlack;
  let client: webApi.WebClient;
  let now: number;
  let logs: ReturnType<typeof captureLogger>;
  const asked = () => slack.callsTo("users.conversations").length;

  beforeAll(async () => {
    slack = await startFakeSlack();
    client = new webApi.WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await slack.close();
  });
  beforeEach(() => {
    slack.reset();
    slack.setListPageMax(100);
    now = 1_000_000;
    logs = captureLogger();
  });
  const membership = () => new ChannelMembership(client, logs.log, { now: () => now });

  it("follows the cursor over every page, leaves archived channels out and asks for public and private ones", async () => {
    for (let i = 0; i < 7; i++) slack.joinChannel("UPAGES", `CPAGE${i}`);
    slack.joinChannel("UPAGES", "CPAGEOLD", { archived: true });
    slack.setListPageMax(3);
    expect((await membership().channels("T1", "UPAGES")).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `CPAGE${i}`));
    const calls = slack.callsTo("users.conversations");
    expect(calls).toHaveLength(3);
    expect(calls[0]!.args).toMatchObject({ user: "UPAGES", types: "public_channel,private_channel", exclude_archived: "true" });
    expect(calls[0]!.args.cursor).toBeUndefined();
    expect(calls[1]!.args.cursor).toBeTruthy();
  });

  it("reuses an answer for a minute, asks again after it (or at once when fresh), so a channel left stops counting", async () => {
    slack.joinChannel("ULEAVE", "CLEAVE1");
    slack.joinChannel("ULEAVE", "CLEAVE2");
    const m = membership();
    expect((await m.channels("T1", "ULEAVE")).sort()).toEqual(["CLEAVE1", "CLEAVE2"]);
    slack.leaveChannel("ULEAVE", "CLEAVE2");
    now += MEMBERSHIP_TTL_MS - 1;
    expect((await m.channels("T1", "ULEAVE")).sort()).toEqual(["CLEAVE1", "CLEAVE2"]);
    expect(asked()).toBe(1);
    now += 2;
    expect(await m.channels("T1", "ULEAVE")).toEqual(["CLEAVE1"]);
    expect(asked()).toBe(2);
    slack.joinChannel("ULEAVE", "CLEAVE3");
    expect((await m.channels("T1", "ULEAVE", { fresh: true })).sort()).toEqual(["CLEAVE1", "CLEAVE3"]);
    expect(asked()).toBe(3);
  });

  it("shows no channel when Slack refuses (a missing scope), and does not keep that answer", async () => {
    slack.joinChannel("USCOPE", "CSCOPE");
    slack.failNext("users.conversations", "missing_scope");
    const m = membership();
    expect(await m.channels("T1", "USCOPE")).toEqual([]);
    expect(logs.find("users.conversations failed; the Home tab shows no channel's lessons")).toHaveLength(1);
    expect(await m.channels("T1", "USCOPE")).toEqual(["CSCOPE"]);
  });
});
