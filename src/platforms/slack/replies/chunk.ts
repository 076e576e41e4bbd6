/** Slack's message limits, for the core's chunker: Slack advises under 4,000 characters of `text`. */
export const SLACK_CHUNK_LIMIT = 3500;
