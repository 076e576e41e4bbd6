/**
 * cairn's posts answering one person's message, found by the mark every part and draft carries
 * (client.ts answerMark): in the thread (channels) or after the message (DMs). Crash recovery
 * reads them so a reply posted just before a crash is recorded instead of posted again.
 */
import { z } from "zod";
import type { PostedPart } from "../../../ground/adapter.ts";
import { ANSWER_EVENT, type SlackClient } from "../client.ts";

const PageSchema = z.looseObject({
  messages: z
    .array(
      z.looseObject({
        ts: z.string(),
        text: z.string().optional(),
        metadata: z.looseObject({ event_type: z.string(), event_payload: z.looseObject({ answers: z.unknown() }).optional() }).optional(),
      }),
    )
    .default([]),
  response_metadata: z.looseObject({ next_cursor: z.string().optional() }).optional(),
});

/** Pages read at most: a reply's parts follow the message closely; a thread this long is not worth reading whole. */
const MAX_PAGES = 5;

export async function postedFor(client: SlackClient, channel: string, threadTs: string | null, messageTs: string): Promise<PostedPart[]> {
  const found: PostedPart[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const args = { channel, oldest: messageTs, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) };
    const raw = threadTs ? await client.conversations.replies({ ...args, ts: threadTs }) : await client.conversations.history(args);
    const parsed = PageSchema.parse(raw);
    for (const m of parsed.messages) {
      if (m.metadata?.event_type === ANSWER_EVENT && m.metadata.event_payload?.answers === messageTs) found.push({ id: m.ts, text: m.text ?? "" });
    }
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) break;
  }
  return found.sort((a, b) => Number(a.id) - Number(b.id));
}
