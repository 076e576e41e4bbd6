/**
 * Where a Slack reply or post lands, as the core's `ReplyTarget`: posts, edits and deletions of
 * already-rendered parts in a channel or thread, and for a person's message the 👀 while cairn
 * works and the thread's earlier messages when cairn enters a thread.
 */
import type { ReplyTarget } from "../../core/adapter.ts";
import type { Logger } from "../../log.ts";
import { deleteMessage, postMessage, updateMessage, type SlackClient } from "./client.ts";
import { threadContext, type ContextLimits } from "./context.ts";
import { slackErrorCode } from "./errors.ts";
import type { BotIdentity, SlackMessage } from "./events.ts";
import type { NameCache } from "./names.ts";

export const WORKING_REACTION = "eyes";

/** A channel, or a thread in it (`threadTs`); undefined posts at the top level. */
export function placeTarget(client: SlackClient, channel: string, threadTs: string | undefined): ReplyTarget {
  return {
    channelId: channel,
    send: (text) => postMessage(client, channel, text, threadTs),
    edit: (ts, text) => updateMessage(client, channel, ts, text),
    remove: (ts) => deleteMessage(client, channel, ts),
  };
}

export interface MessageTargetDeps {
  client: SlackClient;
  names: NameCache;
  bot: BotIdentity;
  log: Logger;
  contextLimits?: ContextLimits;
}

/** The reply to one person's message: in its thread (channels) or where it was posted (DMs). */
export function messageTarget(deps: MessageTargetDeps, m: SlackMessage, log: Logger): ReplyTarget {
  return {
    ...placeTarget(deps.client, m.channel, m.replyThreadTs),
    working: async () => {
      const added = await react(deps.client, m, "add", log);
      return async () => {
        if (added) await react(deps.client, m, "remove", log);
      };
    },
    // Only a reply inside a thread has earlier messages to read; a top-level post starts one.
    ...(m.inThread ? { threadContext: () => threadContext(deps.client, deps.names, deps.bot, m, log, deps.contextLimits) } : {}),
  };
}

/** Adds or removes the working reaction; true when it changed. Failures only cost the indicator. */
async function react(client: SlackClient, m: SlackMessage, action: "add" | "remove", log: Logger): Promise<boolean> {
  const args = { channel: m.channel, timestamp: m.ts, name: WORKING_REACTION };
  try {
    if (action === "add") await client.reactions.add(args);
    else await client.reactions.remove(args);
    return true;
  } catch (err) {
    const error = slackErrorCode(err);
    // Someone else's 👀 (or a previous attempt's) is already there: leave it alone.
    if (error !== "already_reacted" && error !== "no_reaction") log.warn({ error, action }, "could not update the working reaction");
    return false;
  }
}
