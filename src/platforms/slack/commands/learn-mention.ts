/**
 * `@cairn learn` typed in a Slack thread: the learn command for that thread; `@cairn why`: what
 * cairn's last answer in that thread drew on (the why command, shown to the asker alone). A slash command does
 * not say which thread it was typed in (Slack sends the channel only), so a mention is how a Slack
 * thread is learned from. The mention itself is not a turn (nothing is stored or answered by the
 * model as a chat message); the core posts the answer in the thread (recorded, so reactions on it
 * are feedback), or shows it to the asker alone when it is private (a refusal, a failure).
 *
 * Slack sends one mention twice (`message` and `app_mention`) and retries for minutes: a post is
 * run once per process, keyed by its ts.
 */
import type { CorePort } from "../../../ground/adapter.ts";
import type { Inbound } from "../../../ground/types.ts";
import type { Logger } from "../../../ground/log.ts";
import { RecentSet } from "../../../ground/cache/recent-set.ts";
import type { SlackClient } from "../client.ts";
import type { SlackMessage } from "../events.ts";
import { placeTarget } from "../replies/target.ts";
import { mentionCommand } from "../../../ground/commands.ts";

export { mentionCommand };

const seen = new RecentSet(15 * 60_000, 10_000);

export function isLearnMention(text: string): boolean {
  return mentionCommand(text) === "learn";
}

export async function learnFromMention(deps: { core: CorePort; client: SlackClient }, inbound: Inbound, m: SlackMessage, log: Logger, name: "learn" | "why" = "learn"): Promise<void> {
  if (!seen.addIfNew(`${m.teamId}:${m.channel}:${m.ts}`)) {
    log.debug(`duplicate ${name} mention dropped`);
    return;
  }
  const answered = await deps.core.answer(inbound, { name, args: [] }, {
    place: placeTarget(deps.client, m.channel, m.replyThreadTs),
    private: { send: async (text) => void (await deps.client.chat.postEphemeral({ channel: m.channel, user: m.user, text, ...(m.replyThreadTs ? { thread_ts: m.replyThreadTs } : {}) })) },
  });
  log.info({ visibility: answered.visibility, failed: answered.failed }, name === "learn" ? "learn from a thread answered" : "why in a thread answered");
}
