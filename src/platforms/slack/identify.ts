/**
 * Who the bot token is (auth.test), checked once at start: a token that is not a bot's, or a Slack
 * that cannot be reached, stops the adapter with a sentence saying which.
 */
import { z } from "zod";
import type { SlackClient } from "./client.ts";
import { isPlatformError, slackErrorCode } from "./errors.ts";
import type { BotIdentity } from "./events.ts";
import { workspaceUrl } from "./permalink.ts";

const AuthTestSchema = z.looseObject({
  user_id: z.string().min(1),
  bot_id: z.string().min(1, "SLACK_BOT_TOKEN must be a bot token (xoxb-...)"),
  team_id: z.string().min(1),
  user: z.string().optional(),
  team: z.string().optional(),
  /** The workspace's URL: channel knowledge's permalinks are built on it (permalink.ts). */
  url: z.string().optional(),
});

export async function identify(client: SlackClient): Promise<BotIdentity> {
  let answer: unknown;
  try {
    answer = await client.auth.test();
  } catch (err) {
    const why = `auth.test: ${slackErrorCode(err)}`;
    throw new Error(isPlatformError(err) ? `Slack rejected SLACK_BOT_TOKEN (${why})` : `could not reach Slack at ${client.slackApiUrl} to check SLACK_BOT_TOKEN (${why})`);
  }
  const parsed = AuthTestSchema.safeParse(answer);
  if (!parsed.success) throw new Error(`unexpected auth.test answer: ${z.prettifyError(parsed.error)}`);
  const a = parsed.data;
  return { userId: a.user_id, botId: a.bot_id, teamId: a.team_id, name: a.user ?? "cairn", ...(a.team ? { teamName: a.team } : {}), url: workspaceUrl(a.url) };
}
