/**
 * What kind of conversation a channel id is (`PlatformAdapter.channelKind`): cairn never listens in
 * a DM or a group DM, so `/cairn listen on` asks before turning it on. `conversations.info` says
 * (`is_im`, `is_mpim`); a group DM's id can start with G like a private channel's, so the id alone
 * does not tell. A DM's id always starts with D and is answered without a call (reading a DM's info
 * would need a scope cairn has no other use for).
 */
import { z } from "zod";

/** The part of the WebClient this needs. */
export interface InfoClient {
  conversations: { info(args: { channel: string }): Promise<unknown> };
}

const InfoSchema = z.looseObject({
  channel: z.looseObject({ id: z.string().min(1), is_im: z.boolean().optional(), is_mpim: z.boolean().optional() }),
});

export type ChannelKind = "channel" | "dm" | "group_dm";

export async function channelKind(client: InfoClient, channel: string): Promise<ChannelKind> {
  if (channel.startsWith("D")) return "dm";
  const { channel: info } = InfoSchema.parse(await client.conversations.info({ channel }));
  return info.is_im === true ? "dm" : info.is_mpim === true ? "group_dm" : "channel";
}
