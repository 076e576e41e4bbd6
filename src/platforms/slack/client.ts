/** The Web API client type and the few typed calls every module shares. */
import { z } from "zod";
import type { webApi } from "@slack/bolt";

export type SlackClient = webApi.WebClient;

const PostedSchema = z.looseObject({ ts: z.string().min(1) });

/** Posts one message and returns its ts (the id reactions and updates refer to). */
export async function postMessage(client: SlackClient, channel: string, text: string, threadTs: string | undefined): Promise<string> {
  const answer = await client.chat.postMessage({
    channel,
    text,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    // Answers often cite several links; a preview card for each would bury the text.
    unfurl_links: false,
    unfurl_media: false,
  });
  return PostedSchema.parse(answer).ts;
}

export async function updateMessage(client: SlackClient, channel: string, ts: string, text: string): Promise<void> {
  await client.chat.update({ channel, ts, text });
}

export async function deleteMessage(client: SlackClient, channel: string, ts: string): Promise<void> {
  await client.chat.delete({ channel, ts });
}
