/**
 * "Why this answer?", the message shortcut on any message (a `message_action` interaction, callback
 * id `cairn_why`): the why command about that message, shown to the clicker alone in the channel
 * (chat.postEphemeral, in the message's thread). The core finds the answer through the deliveries
 * of that channel and says so when the message is not one of cairn's answers.
 *
 * Slack retries an interaction it thinks went unanswered: a click is run once per process, keyed by
 * its trigger id.
 */
import { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import type { Inbound } from "../../../ground/types.ts";
import type { Logger } from "../../../ground/log.ts";
import { RecentSet } from "../../../ground/cache/recent-set.ts";
import type { SlackClient } from "../client.ts";
import type { NameCache } from "../names.ts";

/** The shortcut's callback id, as slack/manifest.yml declares it. */
export const WHY_CALLBACK_ID = "cairn_why";

const SlackTs = z.string().regex(/^\d+(\.\d+)?$/);

/** The fields of a message_action payload the shortcut needs; Slack sends many more. */
export const WhyShortcutSchema = z.looseObject({
  type: z.literal("message_action"),
  callback_id: z.literal(WHY_CALLBACK_ID),
  trigger_id: z.string().min(1),
  user: z.looseObject({ id: z.string().min(1), team_id: z.string().optional() }),
  // Null for an org-wide install; the clicker's team_id stands in.
  team: z.looseObject({ id: z.string().min(1) }).nullish(),
  channel: z.looseObject({ id: z.string().min(1) }),
  message_ts: SlackTs.optional(),
  message: z.looseObject({ ts: SlackTs, thread_ts: SlackTs.optional() }),
});

export interface WhyShortcutDeps {
  core: CorePort;
  client: SlackClient;
  names: NameCache;
  log: Logger;
}

const seen = new RecentSet(15 * 60_000, 10_000);

export async function onWhyShortcut(deps: WhyShortcutDeps, body: unknown): Promise<void> {
  const parsed = WhyShortcutSchema.safeParse(body);
  if (!parsed.success) {
    deps.log.warn({ detail: z.prettifyError(parsed.error) }, "malformed why shortcut ignored");
    return;
  }
  const p = parsed.data;
  const workspace = p.team?.id ?? p.user.team_id;
  if (!workspace) {
    deps.log.warn("why shortcut without a team ignored");
    return;
  }
  if (!seen.addIfNew(p.trigger_id)) return;
  const channel = p.channel.id;
  const thread = p.message.thread_ts;
  const person = await deps.names.get(p.user.id);
  const inbound: Inbound = {
    platform: "slack",
    workspace: { externalId: workspace },
    author: { externalId: p.user.id, ...(person.displayName ? { displayName: person.displayName } : {}), isBot: person.isBot },
    channel: { externalId: channel, isDm: channel.startsWith("D") },
    // A channel's conversation is its thread: the one the message is in (in a DM, the DM).
    threadId: channel.startsWith("D") ? null : (thread ?? null),
    messageId: `shortcut:${p.trigger_id}`,
    text: `why ${p.message.ts}`,
    sentAt: new Date(),
  };
  // No place: the answer is the clicker's alone, whatever the command would do elsewhere.
  const answered = await deps.core.answer(inbound, { name: "why", args: [p.message.ts] }, {
    private: { send: async (text) => void (await deps.client.chat.postEphemeral({ channel, user: p.user.id, text, ...(thread ? { thread_ts: thread } : {}) })) },
  });
  deps.log.info({ channel, message: p.message.ts, failed: answered.failed }, "why shortcut answered");
}
