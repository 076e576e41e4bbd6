/**
 * Hostile Slack requests, generated rather than listed: every kind of body Slack sends (Events API
 * events, slash commands, interactions, Socket Mode envelopes), correctly signed, with fields taken
 * away or swapped for values of the wrong type, hostile text, deep nesting and prototype keys. None
 * may end the process (an unhandled rejection fails this file; the Socket Mode client had one for an
 * envelope without an event), none may get a 5xx (Slack retries those) or go unacknowledged (Slack
 * shows the person an error), and cairn still answers a person afterwards in both modes.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { blockActions, captureLogger, eventCallback, mulberry32, postInteraction, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { startBothModes, type BothModes } from "../support/slack-modes.ts";
import { hostileValues, mutate, type Json } from "../support/mutate.ts";

forEachDatabase("hostile Slack requests", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let modes: BothModes;
  const logs = captureLogger("warn");

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    core = makeCore(getDb(), anthropic);
    await core.start();
    modes = await startBothModes(core, slack, logs.log);
  });
  afterAll(async () => {
    await modes?.stop();
    await slack?.close();
    await anthropic?.close();
  });

  it("survives generated malformed bodies of every kind in both modes, never answers 5xx, and keeps answering", async () => {
    const team = uniqueId("T");
    slack.addUser({ id: "UALICE", displayName: "Alice" });
    const rand = mulberry32(20261202);
    const hostile = hostileValues(rand);
    const ts = () => slack.nextTs();
    const events = (): Json[] => [
      { type: "message", channel: "DFUZZ", channel_type: "im", user: "UALICE", text: "hello", ts: ts(), event_ts: ts() },
      { type: "message", channel: "CFUZZ", channel_type: "channel", user: "UALICE", text: "in a thread", ts: ts(), thread_ts: ts(), event_ts: ts() },
      { type: "app_mention", channel: "CFUZZ", user: "UALICE", text: "<@UFAKEBOT> hi", ts: ts(), event_ts: ts(), blocks: [{ type: "rich_text", elements: [] }] },
      { type: "message", subtype: "message_changed", channel: "CFUZZ", message: { user: "UALICE", text: "edited", ts: ts() }, previous_message: { ts: ts() }, ts: ts(), event_ts: ts() },
      { type: "message", subtype: "message_deleted", channel: "CFUZZ", deleted_ts: ts(), previous_message: { ts: ts(), text: "gone" }, ts: ts(), event_ts: ts() },
      { type: "reaction_added", user: "UALICE", reaction: "-1", item_user: "UFAKEBOT", item: { type: "message", channel: "CFUZZ", ts: ts() }, event_ts: ts() },
      { type: "reaction_removed", user: "UALICE", reaction: "white_check_mark", item: { type: "message", channel: "CFUZZ", ts: ts() }, event_ts: ts() },
      { type: "app_home_opened", user: "UALICE", channel: "DFUZZ", tab: "home", event_ts: ts() },
      { type: "member_joined_channel", user: "UALICE", channel: "CFUZZ", channel_type: "C", team, event_ts: ts() },
      { type: "member_left_channel", user: "UALICE", channel: "CFUZZ", channel_type: "C", team, event_ts: ts() },
    ];
    const command = (): Json => ({
      token: "unused",
      team_id: team,
      team_domain: "fuzz",
      channel_id: "CFUZZ",
      channel_name: "general",
      user_id: "UALICE",
      user_name: "alice",
      command: "/cairn",
      text: ["help", "me", "lessons", "forget 1", "jobs run curator", "learn some text", "report", "history x", "rollback 1"][Math.floor(rand() * 9)]!,
      api_app_id: "AFAKEAPP",
      response_url: slack.responseUrl(),
      trigger_id: "trig-fuzz",
    });
    const interactions = (): Json[] => [
      blockActions({ teamId: team, user: "UALICE", channel: "CFUZZ", messageTs: ts(), messageUser: "UFAKEBOT", actionId: "feedback", value: "negative" }) as Json,
      { type: "view_submission", team: { id: team }, user: { id: "UALICE" }, trigger_id: "trig", view: { id: "V1", callback_id: "cairn", private_metadata: "{}", state: { values: { b: { a: { type: "plain_text_input", value: "x" } } } } } },
      { type: "shortcut", team: { id: team }, user: { id: "UALICE" }, callback_id: "cairn", trigger_id: "trig" },
      { type: "message_action", team: { id: team }, user: { id: "UALICE" }, channel: { id: "CFUZZ" }, message: { ts: ts(), text: "x" }, callback_id: "learn", trigger_id: "trig" },
    ];

    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    for (let i = 0; i < 120; i++) {
      for (const event of events()) {
        const body = rand() < 0.5 ? eventCallback(team, mutate(event, rand, hostile) as Record<string, unknown>) : (mutate(eventCallback(team, event as Record<string, unknown>) as Json, rand, hostile) as Record<string, unknown>);
        count((await postSigned(modes.eventsUrl, body)).status);
      }
      const cmd = mutate(command(), rand, hostile);
      count((await postSigned(modes.eventsUrl, cmd, { contentType: "application/x-www-form-urlencoded" })).status);
      for (const payload of interactions()) count((await postInteraction(modes.eventsUrl, mutate(payload, rand, hostile))).status);
      // Bodies that are not what their content type says.
      count((await postInteraction(modes.eventsUrl, ["{", "null", "[]", "", "%%%", "{\"type\":1}"][i % 6]!)).status);
      if (i % 4 === 0) {
        // The same through Socket Mode: Slack acknowledges nothing there; the envelope must be acked.
        const [event] = events();
        const ids = [
          slack.pushEnvelope("events_api", mutate(eventCallback(team, event as Record<string, unknown>) as Json, rand, hostile)),
          slack.pushEnvelope("slash_commands", mutate(command(), rand, hostile)),
          slack.pushEnvelope("interactive", mutate(interactions()[i % 4]!, rand, hostile)),
        ];
        for (const id of ids) await slack.waitForAck(id, 15_000);
      }
    }
    // Acknowledged (200), or refused as malformed (400): never a 5xx, and never a 404 after Bolt
    // waited 3 s for an acknowledgement no listener gave (an action or view cairn does not know).
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 400), JSON.stringify([...statuses])).toEqual([]);
    expect(logs.find("An incoming event was not acknowledged within 3 seconds. Ensure that the ack() argument is called in a listener.")).toEqual([]);
    expect(logs.find("malformed Socket Mode envelope acknowledged and ignored").length).toBeGreaterThan(0);

    // Still answering, in both modes.
    anthropic.reset();
    anthropic.enqueue({ text: "Still here over HTTP." });
    anthropic.enqueue({ text: "Still here over the socket." });
    const after = uniqueId("T");
    const http = { type: "message", channel: "DAFTER1", channel_type: "im", user: "UALICE", text: "are you there?", ts: ts(), event_ts: ts() };
    expect((await postSigned(modes.eventsUrl, eventCallback(after, http))).status).toBe(200);
    await waitUntil("the HTTP answer", () => slack.callsTo("chat.postMessage").some((c) => c.args.channel === "DAFTER1" && c.args.text === "Still here over HTTP."), 20_000);
    const socket = { type: "message", channel: "DAFTER2", channel_type: "im", user: "UALICE", text: "and here?", ts: ts(), event_ts: ts() };
    slack.pushEnvelope("events_api", eventCallback(after, socket));
    await waitUntil("the socket answer", () => slack.callsTo("chat.postMessage").some((c) => c.args.channel === "DAFTER2" && c.args.text === "Still here over the socket."), 20_000);
  }, 240_000);
});
