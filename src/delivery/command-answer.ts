/**
 * How a command's answer is shown (the delivery path's part for `CorePort.answer`): rendered and
 * chunked with the adapter's `render` and limits, as replies are. A public answer is posted at the
 * place it was asked, then stored in that place's conversation and its parts recorded as
 * deliveries, as the core's own posts are, so a 👎 or ✅ on it reaches `Core.feedback`; it is
 * stored outside any session, so the model never reads it as something said to it. A private
 * answer is recorded nowhere: nobody else sees it, and it can carry no reactions.
 */
import { errText, type Logger } from "../ground/log.ts";
import type { Answered, CommandTarget, DraftOptions, PrivateReply } from "../ground/adapter.ts";
import type { CommandReply } from "../ground/commands.ts";
import { COMMAND_FAILED_REPLY } from "../ground/replies.ts";
import type { Inbound } from "../ground/types.ts";
import type { HistoryStore } from "../history/store/store.ts";
import { DraftReply } from "./draft.ts";

export interface AnswerDeps {
  history: HistoryStore;
  log: Logger;
  /** The adapter's rendering and limits; no apology (a refused public part falls back to private). */
  options: DraftOptions;
  /** The adapter can show an answer to the asker alone (`Capabilities.ephemeral`). */
  canBePrivate: boolean;
}

/** The command's answer; one that throws is answered with the one apology, privately (logged). */
export async function runCommandSafely(run: () => Promise<CommandReply>, log: Logger): Promise<CommandReply> {
  try {
    const reply = await run();
    log.info({ outcome: reply.outcome ?? null, ephemeral: reply.ephemeral }, "command run");
    return reply;
  } catch (err) {
    log.error({ err }, "command failed");
    return { text: COMMAND_FAILED_REPLY, ephemeral: true };
  }
}

/**
 * Public (not `ephemeral`, or the platform cannot be private): posted at `target.place`; should the
 * platform take no part of it, the asker is shown it privately where possible. Private (asked so,
 * or no place given): shown to the asker alone.
 */
export async function showCommandAnswer(deps: AnswerDeps, inbound: Inbound, markdown: string, ephemeral: boolean, target: CommandTarget): Promise<Answered> {
  const privately = deps.canBePrivate ? target.private : undefined;
  const log = deps.log.child({ platform: inbound.platform, channel: inbound.channel.externalId });
  if (target.place && !(ephemeral && privately)) {
    const shown = await new DraftReply(target.place, deps.options).finish(markdown);
    if (shown.posted.length) return { visibility: "public", messageId: await recordAnswer(deps.history, inbound, target.place.channelId, markdown, shown.posted, log), ...shown };
    if (!privately) return { visibility: "public", messageId: null, ...shown };
    log.warn("the platform took no part of a public command answer; showing it to the asker alone");
  }
  if (!privately) {
    log.error({ ephemeral }, "a command came with no place to answer in that this platform can show");
    return { visibility: "private", messageId: null, posted: [], failed: true };
  }
  return { visibility: "private", messageId: null, posted: [], failed: !(await showPrivately(privately, deps.options, markdown)) };
}

/** A public answer in history, where reactions on its parts find it; null when it could not be recorded. */
async function recordAnswer(history: HistoryStore, inbound: Inbound, channelId: string, markdown: string, posted: readonly string[], log: Logger): Promise<number | null> {
  try {
    const dm = inbound.channel.isDm;
    const conversation = await history.placeOfPost(inbound.platform, inbound.workspace.externalId, channelId, dm ? null : (inbound.threadId ?? null), dm ? inbound.author.externalId : null);
    const message = await history.recordPost(conversation, markdown);
    await history.recordDeliveries(conversation.id, message.id, channelId, posted);
    return message.id;
  } catch (err) {
    log.error({ err, parts: posted }, "could not record a command answer's delivery; reactions on it will be ignored");
    return null;
  }
}

/** Part by part; false when a part was refused (logged: the rest would read out of order). */
async function showPrivately(reply: PrivateReply, options: DraftOptions, markdown: string): Promise<boolean> {
  const parts = options.chunk(options.render(markdown));
  for (const part of parts.length ? parts : ["…"]) {
    try {
      await reply.send(part);
    } catch (err) {
      options.log.warn({ err: errText(err) }, "could not show a private answer");
      return false;
    }
  }
  return true;
}
