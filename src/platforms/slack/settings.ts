/** Slack facts the adapter and `cairn doctor` share. */

/** Here rather than in adapter.ts: `cairn doctor` calls the Web API without loading Bolt. */
export const DEFAULT_SLACK_API_URL = "https://slack.com/api/";
