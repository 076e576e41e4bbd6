/**
 * When the inbound journal cannot keep an event (a full or failing disk), the platform is not
 * acknowledged: Slack's HTTP mode answers 503 and Socket Mode leaves the envelope unacknowledged,
 * so Slack delivers it again; once the journal writes again, the redelivery is answered once.
 * The real Slack adapter (both modes) against the fake Slack, the real Core.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { TEST_SETTINGS } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { startBothModes, type BothModes } from "../support/slack-modes.ts";
import { Core } from "../../src/app/core.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { MemoryJournal } from "../../src/journal/memory-journal.ts";

/** A journal whose disk can be made to fail. */
class FlakyJournal extends MemoryJournal {
  failing = false;
  override append(): Promise<{ seq: number; at: number }> {
    return this.failing ? Promise.reject(new Error("ENOSPC: no space left on device")) : super.append();
  }
}

forEachDatabase("the journal cannot keep an event", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let modes: BothModes;
  const journal = new FlakyJournal();

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: "Answered." });
    slack = await startFakeSlack();
    const model = createModelClient({ apiKey: anthropic.apiKey, baseURL: anthropic.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
    core = new Core({ database: getDb(), model, settings: TEST_SETTINGS, log: silentLogger, journal: { backend: journal, pending: [] } });
    await core.start();
    modes = await startBothModes(core, slack, silentLogger);
  });
  afterAll(async () => {
    await modes?.stop();
    await Promise.all([slack?.close(), anthropic?.close()]);
  });

  it("answers 503 in HTTP mode and leaves the Socket Mode envelope unacknowledged, then answers the redelivery once", async () => {
    const team = uniqueId("T");
    const dm = (user: string, text: string) => {
      const ts = slack.nextTs();
      return { type: "message", channel: `D${user}${team.slice(2)}`, channel_type: "im", user, text, ts, event_ts: ts };
    };
    const posts = (channel: string) => slack.botPosts().filter((p) => p.channel === channel);
    journal.failing = true;
    const overHttp = dm("UALICE", "hello over http");
    const body = eventCallback(team, overHttp);
    expect((await postSigned(modes.eventsUrl, body)).status).toBe(503);
    const overSocket = dm("UBOB", "hello over the socket");
    const envelope = slack.pushEnvelope("events_api", eventCallback(team, overSocket));
    await new Promise((r) => setTimeout(r, 500));
    expect(slack.acks.some((a) => a.envelope_id === envelope)).toBe(false);
    expect(posts(overHttp.channel)).toEqual([]);
    expect(await getDb().prisma.message.count({ where: { platformId: { in: [overHttp.ts, overSocket.ts] } } })).toBe(0);

    // The disk writes again: Slack's retry (the same event) is kept, acknowledged and answered once.
    journal.failing = false;
    expect((await postSigned(modes.eventsUrl, body, { retryNum: 1 })).status).toBe(200);
    await waitUntil("the answer", () => posts(overHttp.channel).length === 1, 15_000);
    expect(posts(overHttp.channel).map((p) => p.text)).toEqual(["Answered."]);
  });
});
