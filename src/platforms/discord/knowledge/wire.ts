/**
 * The Discord payloads channel knowledge reads, as zod schemas: messages (from the gateway and from
 * GET /channels/{id}/messages, which share one shape), their edits and deletions, and thread lists.
 *
 * Why raw payloads and not discord.js structures: a history page comes from REST as plain JSON, and
 * edits and deletions of messages discord.js never cached arrive as partials without their text or
 * author. Reading the wire shape for both live events and history gives one mapping (what a kept
 * message looks like) and no dependence on what happens to be in the cache. Only the fields used
 * are listed; the rest passes through (loose objects), so a field Discord adds breaks nothing.
 */
import { z } from "zod";

export const WireUser = z.looseObject({
  id: z.string(),
  username: z.string(),
  global_name: z.string().nullish(),
  bot: z.boolean().optional(),
});

/** The guild member beside a gateway message (absent from REST history pages). */
const WireMember = z.looseObject({ nick: z.string().nullish() });

const WireMention = WireUser.extend({ member: WireMember.optional() });

export const WireMessage = z.looseObject({
  id: z.string(),
  channel_id: z.string(),
  /** Set on gateway guild messages; DMs have none; REST pages leave it out. */
  guild_id: z.string().optional(),
  author: WireUser,
  member: WireMember.optional(),
  content: z.string(),
  timestamp: z.string(),
  type: z.number().int(),
  webhook_id: z.string().optional(),
  mentions: z.array(WireMention).default([]),
});
export type WireMessage = z.infer<typeof WireMessage>;

export const WireMessages = z.array(WireMessage);

/** MESSAGE_UPDATE: since API v10 the whole message, but `content` may still be missing (an embed unfurled). */
export const WireMessageUpdate = z.looseObject({
  id: z.string(),
  channel_id: z.string(),
  guild_id: z.string().optional(),
  content: z.string().optional(),
  author: WireUser.optional(),
  webhook_id: z.string().optional(),
  mentions: z.array(WireMention).default([]),
});

export const WireMessageDelete = z.looseObject({ id: z.string(), channel_id: z.string(), guild_id: z.string().optional() });

export const WireMessageDeleteBulk = z.looseObject({ ids: z.array(z.string()), channel_id: z.string(), guild_id: z.string().optional() });

export const WireThread = z.looseObject({
  id: z.string(),
  type: z.number().int(),
  parent_id: z.string().nullish(),
  thread_metadata: z.looseObject({ archive_timestamp: z.string() }).optional(),
});

/** GET /guilds/{guild}/threads/active and GET /channels/{channel}/threads/archived/public. */
export const WireThreadList = z.looseObject({ threads: z.array(WireThread), has_more: z.boolean().optional() });

/** A gateway dispatch as discord.js's `raw` event hands it over. */
export const WireDispatch = z.looseObject({ t: z.string().nullish(), d: z.unknown() });
