/**
 * A post the core starts itself, in the platform's rich form (`ReplyTarget.sendRich`: Slack
 * blocks, a Discord embed) as one message. Null whenever nothing was posted, so the caller posts
 * the Markdown as text parts instead: the place has no rich form, the post does not fit the
 * platform's limits, or the platform refused it (a refused call posted nothing).
 */
import { errText, type Logger } from "../ground/log.ts";
import type { ReplyTarget, RichPost, Shown } from "../ground/adapter.ts";

export async function sendRichPost(place: ReplyTarget, rich: RichPost, markdown: string, log: Logger): Promise<Shown | null> {
  if (!place.sendRich) return null;
  try {
    const id = await place.sendRich(rich, markdown);
    if (id !== null) return { posted: [id], failed: false };
    log.info({ channel: place.channelId }, "the post's rich form exceeds the platform's limits; posting it as text");
  } catch (err) {
    log.warn({ channel: place.channelId, err: errText(err) }, "the platform refused the post's rich form; posting it as text");
  }
  return null;
}
