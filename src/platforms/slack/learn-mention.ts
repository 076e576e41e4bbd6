/**
 * `@cairn learn` typed in a Slack thread: the learn command for that thread. A slash command does
 * not say which thread it was typed in (Slack sends the channel only), so a mention is how a Slack
 * thread is learned from. The mention itself is not a turn (nothing is stored or answered by the
 * model as a chat message); the answer is posted in the thread, or shown to the asker alone when it
 * is private (a refusal, a failure).
 *
 * Slack sends one mention twice (`message` and `app_mention`) and retries for minutes: a post is
 * run once per process, keyed by its ts.
 */
import type { CorePort } from "../../ground/adapter.ts";
import type { Inbound } from "../../ground/types.ts";
import type { Logger } from "../../ground/log.ts";
import { RecentSet } from "../../ground/cache/recent-set.ts";
import { chunkText } from "../../ground/chunk.ts";
import { SLACK_CHUNK_LIMIT } from "./chunk.ts";
import { postMessage, type SlackClient } from "./client.ts";
import { slackErrorCode } from "./errors.ts";
import type { SlackMessage } from "./events.ts";
import { toMrkdwn } from "./mrkdwn.ts";

/** "learn", "learn from this thread" (cairn's own mention already stripped). */
const LEARN_MESSAGE = /^learn(?:\s+from\s+(?:this|the)\s+(?:thread|conversation))?[.!]?$/i;

const seen = new RecentSet(15 * 60_000, 10_000);

export function isLearnMention(text: string): boolean {
  return LEARN_MESSAGE.test(text.trim());
}

export async function learnFromMention(deps: { core: CorePort; client: SlackClient }, inbound: Inbound, m: SlackMessage, log: Logger): Promise<void> {
  if (!seen.addIfNew(`${m.teamId}:${m.channel}:${m.ts}`)) {
    log.debug("duplicate learn mention dropped");
    return;
  }
  let reply;
  try {
    reply = await deps.core.command(inbound, "learn", []);
  } catch (err) {
    log.error({ err }, "learn from a thread failed");
    reply = { text: "Sorry, something went wrong on my side learning from this thread. Please try again.", ephemeral: true };
  }
  for (const text of chunkText(toMrkdwn(reply.text), { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY })) {
    try {
      if (reply.ephemeral) await deps.client.chat.postEphemeral({ channel: m.channel, user: m.user, text, ...(m.replyThreadTs ? { thread_ts: m.replyThreadTs } : {}) });
      else await postMessage(deps.client, m.channel, text, m.replyThreadTs);
    } catch (err) {
      log.error({ error: slackErrorCode(err) }, "could not post the learn answer");
      return;
    }
  }
  log.info({ ephemeral: reply.ephemeral }, "learn from a thread answered");
}
