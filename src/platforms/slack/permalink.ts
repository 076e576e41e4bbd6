/**
 * Slack permalinks, built rather than asked for: `chat.getPermalink` is one Web API call per
 * message, and a backfill keeps thousands of them, so the link is made from the workspace's URL
 * (`auth.test`'s `url`, kept in the bot identity) in the form Slack's own permalinks take:
 * `https://acme.slack.com/archives/C123/p1700000000123456`, and for a reply in a thread
 * `...?thread_ts=1700000000.000100&cid=C123` (the thread opens beside the channel).
 */

/** Where links point when auth.test gave no workspace URL: Slack redirects it to the workspace the reader is in. */
export const FALLBACK_WORKSPACE_URL = "https://slack.com/";

/** The workspace URL with exactly one trailing slash. */
export function workspaceUrl(url: string | undefined): string {
  const base = url?.trim() || FALLBACK_WORKSPACE_URL;
  return base.endsWith("/") ? base : `${base}/`;
}

/** `threadTs`: the thread the message is a reply in (not its own ts: a thread's first message is a channel message). */
export function permalink(url: string | undefined, channel: string, ts: string, threadTs?: string | null): string {
  const link = `${workspaceUrl(url)}archives/${encodeURIComponent(channel)}/p${ts.replace(".", "")}`;
  return threadTs && threadTs !== ts ? `${link}?thread_ts=${encodeURIComponent(threadTs)}&cid=${encodeURIComponent(channel)}` : link;
}
