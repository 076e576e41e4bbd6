/**
 * The Slack adapter as the end-to-end tests run it against the fake Slack: settings with quick
 * retries, drafts and drain, and one core served in both of Slack's modes at once.
 */
import type { AdapterHost } from "../../src/ground/adapter.ts";
import type { Logger } from "../../src/ground/log.ts";
import { startSlack, type SlackHandle, type SlackSettings } from "../../src/platforms/slack/adapter.ts";
import { APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, type FakeSlack } from "../fakes/slack.ts";

/** Settings for an adapter against `slack`: HTTP mode with a signing secret, Socket Mode with an app token (in `extra`). */
export function fakeSlackSettings(slack: FakeSlack, extra: Partial<SlackSettings> = {}): SlackSettings {
  return { botToken: BOT_TOKEN, apiUrl: slack.apiUrl, port: 0, host: "127.0.0.1", retries: 2, retryMinMs: 10, progressIntervalMs: 50, drainMs: 5_000, ...extra };
}

export interface BothModes {
  httpMode: SlackHandle;
  /** Attached last: the core's own posts go through it. */
  socketMode: SlackHandle;
  /** Where signed Events API requests go. */
  eventsUrl: string;
  stop(): Promise<void>;
}

/** One core on Slack's HTTP mode and Socket Mode at once, both connected to `slack`. */
export async function startBothModes(core: AdapterHost, slack: FakeSlack, log: Logger): Promise<BothModes> {
  const httpMode = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), log);
  const socketMode = await startSlack(core, fakeSlackSettings(slack, { appToken: APP_TOKEN }), log);
  await slack.waitForSocket();
  return {
    httpMode,
    socketMode,
    eventsUrl: `http://127.0.0.1:${httpMode.port}/slack/events`,
    stop: async () => {
      await httpMode.stop();
      await socketMode.stop();
    },
  };
}
