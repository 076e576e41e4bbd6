/** The Web API client type and the few typed calls every module shares. */
import { z } from "zod";
import type { types, webApi } from "@slack/bolt";

export type SlackClient = webApi.WebClient;
export type SlackBlock = types.KnownBlock;

const PostedSchema = z.looseObject({ ts: z.string().min(1) });

/**
 * The mark on every part (and draft) of a reply: the ts of the person's message it answers, as
 * message metadata, which `conversations.replies` / `.history` return with include_all_metadata.
 * It lets crash recovery find a reply posted just before a crash instead of posting it again.
 */
export const ANSWER_EVENT = "cairn_answer";
export function answerMark(answers: string): { event_type: string; event_payload: { answers: string } } {
  return { event_type: ANSWER_EVENT, event_payload: { answers } };
}

/**
 * Posts one message and returns its ts (the id reactions and updates refer to). With `blocks`,
 * Slack shows the blocks and keeps `text` for notifications and clients without Block Kit.
 */
export async function postMessage(client: SlackClient, channel: string, text: string, threadTs: string | undefined, blocks?: readonly SlackBlock[], answers?: string): Promise<string> {
  const answer = await client.chat.postMessage({
    channel,
    text,
    ...(blocks ? { blocks: [...blocks] } : {}),
    ...(answers ? { metadata: answerMark(answers) } : {}),
    ...(threadTs ? { thread_ts: threadTs } : {}),
    // Answers often cite several links; a preview card for each would bury the text.
    unfurl_links: false,
    unfurl_media: false,
  });
  return PostedSchema.parse(answer).ts;
}

export async function updateMessage(client: SlackClient, channel: string, ts: string, text: string, blocks?: readonly SlackBlock[]): Promise<void> {
  await client.chat.update({ channel, ts, text, ...(blocks ? { blocks: [...blocks] } : {}) });
}

export async function deleteMessage(client: SlackClient, channel: string, ts: string): Promise<void> {
  await client.chat.delete({ channel, ts });
}
