import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Structured logs on stderr (stdout belongs to the console chat). Token-bearing fields are redacted
 * by path so a logged config or request never leaks a credential.
 */
export function createLogger(level: string = "info", destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino(
    {
      level,
      base: { app: "cairn" },
      redact: {
        paths: [
          "*.ANTHROPIC_API_KEY",
          "*.SLACK_BOT_TOKEN",
          "*.SLACK_APP_TOKEN",
          "*.SLACK_SIGNING_SECRET",
          "*.DISCORD_TOKEN",
          "*.apiKey",
          "*.token",
          "headers.authorization",
          "headers['x-api-key']",
        ],
        censor: "[REDACTED]",
      },
    },
    destination as pino.DestinationStream,
  );
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: "silent" });
