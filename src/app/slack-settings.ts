/** The Slack part of the validated environment, for wiring in main.ts. */
import type { Config } from "./config.ts";
import type { SlackSettings } from "../platforms/slack/adapter.ts";

/** Null when SLACK_BOT_TOKEN is not set (Slack is off); startSlack checks the rest. */
export function slackSettings(cfg: Config): SlackSettings | null {
  if (!cfg.SLACK_BOT_TOKEN) return null;
  return {
    botToken: cfg.SLACK_BOT_TOKEN,
    ...(cfg.SLACK_APP_TOKEN ? { appToken: cfg.SLACK_APP_TOKEN } : {}),
    ...(cfg.SLACK_SIGNING_SECRET ? { signingSecret: cfg.SLACK_SIGNING_SECRET } : {}),
    ...(cfg.SLACK_API_URL ? { apiUrl: cfg.SLACK_API_URL } : {}),
    port: cfg.PORT,
    allowMassMentions: cfg.CAIRN_ALLOW_MASS_MENTIONS,
  };
}
