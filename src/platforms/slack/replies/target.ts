/**
 * Where a Slack reply or post lands, as the core's `ReplyTarget`: posts, edits and deletions of
 * already-rendered parts in a channel or thread, and for a person's message the 👀 while cairn
 * works, the thread's earlier messages when cairn enters a thread, and the feedback buttons on
 * its answer.
 */
import type { ReplyTarget } from "../../../ground/adapter.ts";
import type { Logger } from "../../../ground/log.ts";
import { deleteMessage, postMessage, updateMessage, type SlackBlock, type SlackClient } from "../client.ts";
import { threadContext, type ContextLimits } from "./context.ts";
import { slackErrorCode } from "../errors.ts";
import type { BotIdentity, SlackMessage } from "../events.ts";
import type { NameCache } from "../names.ts";
import { richMessage } from "./rich.ts";
import { AnswerSurface } from "./surface.ts";

export const WORKING_REACTION = "eyes";

/** A place to post in, whose posts and edits may carry blocks beside their text. */
export interface SlackPlace extends ReplyTarget {
  send(text: string, blocks?: readonly SlackBlock[]): Promise<string>;
  edit(ts: string, text: string, blocks?: readonly SlackBlock[]): Promise<void>;
  remove(ts: string): Promise<void>;
}

/**
 * A channel, or a thread in it (`threadTs`); undefined posts at the top level. The core's rich
 * posts (a report) go as Block Kit with their mrkdwn as the fallback text (rich.ts). `answers`:
 * the ts of the person's message the posts answer; each post is marked with it (client.ts answerMark).
 */
export function placeTarget(client: SlackClient, channel: string, threadTs: string | undefined, answers?: string): SlackPlace {
  return {
    channelId: channel,
    send: (text, blocks) => postMessage(client, channel, text, threadTs, blocks, answers),
    sendRich: async (post, fallbackMarkdown) => {
      const message = richMessage(post, fallbackMarkdown);
      return message ? postMessage(client, channel, message.text, threadTs, message.blocks) : null;
    },
    edit: (ts, text, blocks) => updateMessage(client, channel, ts, text, blocks),
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

/**
 * The reply to one person's message: in its thread (channels) or where it was posted (DMs). Its
 * surface is the core's draft with feedback buttons on the answer (surface.ts).
 */
export function messageTarget(deps: MessageTargetDeps, m: SlackMessage, log: Logger): ReplyTarget {
  const place = placeTarget(deps.client, m.channel, m.replyThreadTs, m.ts);
  return {
    ...place,
    surface: (draft) => new AnswerSurface(place, draft),
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
    // A reaction is per user: `already_reacted` is cairn's own 👀 from an earlier attempt at this
    // message (a process killed mid-turn, a turn waiting out a database outage). Whoever finishes
    // the turn takes it off.
    if (action === "add" && error === "already_reacted") return true;
    if (error !== "no_reaction") log.warn({ error, action }, "could not update the working reaction");
    return false;
  }
}
