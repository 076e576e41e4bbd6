/** A real Core for the benchmarks, with production defaults (from the config schema) and a fake model. */
import { Core } from "../../src/app/core.ts";
import type { AgentSettings } from "../../src/app/agent-settings.ts";
import { loadConfig } from "../../src/app/config.ts";
import { agentSettings } from "../../src/app/settings.ts";
import { silentLogger } from "../../src/ground/log.ts";
import type { Database } from "../../src/db/client.ts";
import type { ModelClient } from "../../src/agent/model.ts";
import type { Inbound } from "../../src/ground/types.ts";

export function benchSettings(overrides: Partial<AgentSettings> = {}): AgentSettings {
  // The defaults every deployment gets, with the rate limit off: a benchmark sends far more than a person.
  const defaults = agentSettings(loadConfig({ ANTHROPIC_API_KEY: "sk-ant-bench", DATABASE_URL: "file:./data/bench-unused.db" }));
  return { ...defaults, rateLimitPerHour: 0, ...overrides };
}

export async function benchCore(database: Database, model: ModelClient, overrides: Partial<AgentSettings> = {}, now?: () => Date): Promise<Core> {
  const core = new Core({ database, model, settings: benchSettings(overrides), log: silentLogger, ...(now ? { now } : {}) });
  await core.start();
  return core;
}

export function channelMessage(workspace: string, user: string, channel: string, text: string, messageId: string, sentAt = new Date(), isDm = false): Inbound {
  return {
    platform: "slack",
    workspace: { externalId: workspace },
    author: { externalId: user, displayName: user },
    channel: { externalId: channel, isDm },
    threadId: null,
    messageId,
    text,
    sentAt,
  };
}

/** The reply text of a handled message; throws if the core dropped it. */
export async function replyText(core: Core, inbound: Inbound, opts: { answered?: boolean } = {}): Promise<string> {
  const r = await core.handle(inbound);
  if (r.kind !== "reply") throw new Error(`message dropped: ${r.reason}`);
  // `answered`: a failed turn (an apology) sends fewer statements and takes less time; counted, it would read as a gain.
  if (opts.answered && r.reply.status !== "ok") throw new Error(`the turn did not answer (${r.reply.status}): ${r.reply.text.slice(0, 200)}`);
  return r.reply.text;
}
