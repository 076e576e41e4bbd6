/**
 * Everyone in a channel now (`PlatformAdapter.channelMembers`), from `conversations.members`, every
 * page of it: on Slack, who may search a listened channel's messages is who is in the channel. The
 * core keeps the list (ChannelMember), reads it again after a while, and changes it at once on
 * member events (observe.ts); this is the whole read. A failure throws: the core keeps the list it
 * had and tries again at the next search. cairn itself is left out: it never searches as a reader,
 * and `listen status` counts the people who can.
 */
import { z } from "zod";
import type { Logger } from "../../../ground/log.ts";

/** The part of the WebClient this needs. */
export interface MembersClient {
  conversations: { members(args: { channel: string; limit: number; cursor?: string }): Promise<unknown> };
}

const PageSchema = z.looseObject({
  members: z.array(z.string().min(1)),
  response_metadata: z.looseObject({ next_cursor: z.string().optional() }).optional(),
});

/** Members per call (Slack's maximum is 1,000; it recommends no more than 200). */
const PAGE = 200;
/** 100,000 members: a channel larger than that has the rest left out (and a warning logged). */
const MAX_PAGES = 500;

export async function channelMembers(client: MembersClient, channel: string, log: Logger, self?: string): Promise<string[]> {
  const members = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const parsed = PageSchema.parse(await client.conversations.members({ channel, limit: PAGE, ...(cursor ? { cursor } : {}) }));
    for (const id of parsed.members) if (id !== self) members.add(id);
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) return [...members];
  }
  log.warn({ channel, members: members.size }, "a channel larger than cairn reads; its other members cannot search what it keeps of it");
  return [...members];
}
