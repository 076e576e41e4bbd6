/**
 * One message event, from Slack's payload to the answer in the thread: decide whether it is a
 * turn, drop the second delivery of the same post, mark the post with 👀 while working, read the
 * thread's earlier messages when entering it, run the core's turn (showing tool statuses and the
 * answer as it streams), post the final answer over that draft, and record the delivery.
 */
import type { Core } from "../../core/core.ts";
import type { Logger } from "../../log.ts";
import { threadContext, type ContextLimits } from "./context.ts";
import { slackErrorCode } from "./errors.ts";
import { classifyMessage, toInbound, type BotIdentity, type SlackMessage } from "./events.ts";
import type { NameCache } from "./names.ts";
import type { RecentSet } from "./recent.ts";
import { ReplyWriter } from "./reply.ts";
import type { SlackClient } from "./client.ts";
import { threadConversationKey, type ThreadTracker } from "./threads.ts";

export const WORKING_REACTION = "eyes";

export interface TurnDeps {
  core: Core;
  client: SlackClient;
  bot: BotIdentity;
  names: NameCache;
  threads: ThreadTracker;
  /** Posts already taken on by this process ("team:channel:ts"). */
  seen: RecentSet;
  log: Logger;
  /** Least time between two edits of the working message (status or streamed draft). */
  minUpdateMs: number;
  chunkLimit?: number;
  contextLimits?: ContextLimits;
}

export interface EventMeta {
  eventType: string;
  eventId?: string | undefined;
  retryNum?: number | undefined;
}

export async function onMessageEvent(deps: TurnDeps, event: unknown, body: unknown, meta: EventMeta): Promise<void> {
  const c = classifyMessage(event, body, deps.bot);
  if (c.kind === "drop") {
    const { kind: _kind, ...fields } = { ...meta, ...c };
    if (c.reason === "malformed") deps.log.warn(fields, "malformed message event ignored");
    else deps.log.debug(fields, "message dropped");
    return;
  }
  const m = c.message;
  const threadKey = m.threadId === null ? null : threadConversationKey(m.teamId, m.channel, m.threadId);
  let followed = false;
  if (c.kind === "thread_reply") {
    followed = threadKey !== null && (await deps.threads.isFollowed(threadKey));
    if (!followed) {
      deps.log.debug({ ...meta, channel: m.channel, ts: m.ts, reason: "not_addressed" }, "message dropped");
      return;
    }
  }
  // Synchronous check-and-set: of Slack's `message` + `app_mention` pair and its retries, the first
  // to get here answers. The core's stored-message key catches what a restart forgets.
  if (!deps.seen.addIfNew(`${m.teamId}:${m.channel}:${m.ts}`)) {
    deps.log.debug({ ...meta, channel: m.channel, ts: m.ts }, "duplicate delivery dropped");
    return;
  }
  if (c.kind === "mention" && threadKey !== null && m.inThread) followed = await deps.threads.isFollowed(threadKey);
  if (threadKey !== null) deps.threads.follow(threadKey);
  await answer(deps, m, { readThread: c.kind === "mention" && m.inThread && !followed, addressed: c.kind !== "thread_reply", wasFollowed: followed, meta });
}

interface AnswerOptions {
  /** Read the thread's earlier messages first (entering a thread cairn was not in). */
  readThread: boolean;
  /** A DM or a mention, as opposed to a reply in a followed thread. */
  addressed: boolean;
  /** The thread was followed before this message. */
  wasFollowed: boolean;
  meta: EventMeta;
}

async function answer(deps: TurnDeps, m: SlackMessage, opts: AnswerOptions): Promise<void> {
  const log = deps.log.child({ team: m.teamId, channel: m.channel, ts: m.ts, ...(m.threadId ? { thread: m.threadId } : {}) });
  const person = await deps.names.get(m.user);
  if (person.isBot) {
    // A bot user posting without bot_id (some integrations do): still never a turn.
    log.debug({ ...opts.meta, reason: "bot" }, "message dropped");
    return;
  }
  const eyes = react(deps, m, "add", log);
  try {
    const context = opts.readThread ? await threadContext(deps.client, deps.names, deps.bot, m, log, deps.contextLimits) : "";
    const inbound = { ...toInbound(m, person, deps.bot), ...(context ? { context } : {}) };
    const writer = new ReplyWriter(deps.client, { channel: m.channel, threadTs: m.replyThreadTs }, log, {
      minUpdateMs: deps.minUpdateMs,
      ...(deps.chunkLimit ? { chunkLimit: deps.chunkLimit } : {}),
    });
    let result;
    try {
      result = await deps.core.handle(inbound, { onProgress: writer.progress, onText: writer.text, onTextReset: writer.resetText });
    } catch (err) {
      log.error({ err }, "the turn failed before an answer");
      await writer.apologise("Sorry, something went wrong on my side while answering. Please try again.");
      return;
    }
    if (result.kind === "dropped") {
      await writer.close();
      log.info({ reason: result.reason, retryNum: opts.meta.retryNum }, "the core dropped the message");
      return;
    }
    const reply = result.reply;
    if (reply.status === "refused" && !opts.addressed) {
      // Someone cairn may not serve chatting in a thread it follows did not ask it anything: a
      // refusal under each of their replies would only be noise.
      await writer.close();
      log.info({ reason: "refused" }, "not answering an unaddressed reply from someone cairn may not serve");
      return;
    }
    if (reply.status === "refused" && m.threadId !== null && !opts.wasFollowed) deps.threads.unfollow(threadConversationKey(m.teamId, m.channel, m.threadId));
    if (reply.status !== "ok") log.warn({ reply: reply.replyMessageId, status: reply.status }, "posting the core's non-answer (apology, refusal or limit)");
    const { posted, failed } = await writer.finish(reply.text);
    if (posted.length) {
      try {
        await deps.core.recordDelivery(reply, m.channel, posted);
      } catch (err) {
        log.error({ err, reply: reply.replyMessageId, parts: posted }, "could not record the delivery; reactions on it will be ignored");
      }
    }
    log.info({ reply: reply.replyMessageId, parts: posted.length, status: reply.status, failed }, "reply posted");
  } finally {
    if (await eyes) await react(deps, m, "remove", log);
  }
}

/** Adds or removes the working reaction; true when it changed. Failures only cost the indicator. */
async function react(deps: TurnDeps, m: SlackMessage, action: "add" | "remove", log: Logger): Promise<boolean> {
  const args = { channel: m.channel, timestamp: m.ts, name: WORKING_REACTION };
  try {
    if (action === "add") await deps.client.reactions.add(args);
    else await deps.client.reactions.remove(args);
    return true;
  } catch (err) {
    const error = slackErrorCode(err);
    // Someone else's 👀 (or a previous attempt's) is already there: leave it alone.
    if (error !== "already_reacted" && error !== "no_reaction") log.warn({ error, action }, "could not update the working reaction");
    return false;
  }
}
