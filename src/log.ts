import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Token shapes scrubbed from every log line, wherever they appear (a field, an error message, a
 * URL): redaction paths alone miss a token inside free text.
 */
const TOKEN_PATTERNS: RegExp[] = [
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
  /\bxapp-\d-[A-Za-z0-9-]{8,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}/g,
  /\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /(\b[a-z][a-z0-9+.-]*:\/\/[^:\s/@]+:)[^@\s/]+@/gi,
];

export function scrubTokens(line: string): string {
  let out = line;
  for (const re of TOKEN_PATTERNS) out = out.replace(re, (m, prefix?: string) => (typeof prefix === "string" && m.endsWith("@") ? `${prefix}[REDACTED]@` : "[REDACTED]"));
  return out;
}

/**
 * Structured logs on stderr (stdout belongs to the console chat). Known secret fields are removed by
 * path, and every line is scrubbed of token shapes before it is written.
 */
export function createLogger(level: string = "info", destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino(
    {
      level,
      base: { app: "cairn" },
      redact: {
        paths: [
          "ANTHROPIC_API_KEY",
          "SLACK_BOT_TOKEN",
          "SLACK_APP_TOKEN",
          "SLACK_SIGNING_SECRET",
          "DISCORD_TOKEN",
          "*.ANTHROPIC_API_KEY",
          "*.SLACK_BOT_TOKEN",
          "*.SLACK_APP_TOKEN",
          "*.SLACK_SIGNING_SECRET",
          "*.DISCORD_TOKEN",
          "*.apiKey",
          "*.token",
          "*.botToken",
          "*.appToken",
          "*.signingSecret",
          "*.headers.authorization",
          "*.headers['x-api-key']",
          "headers.authorization",
          "headers['x-api-key']",
        ],
        censor: "[REDACTED]",
      },
      hooks: { streamWrite: scrubTokens },
    },
    destination as pino.DestinationStream,
  );
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: "silent" });

/** An error's message for a log field, whatever was thrown. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
