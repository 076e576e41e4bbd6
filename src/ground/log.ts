import { openSync } from "node:fs";
import { makeFolders } from "./paths.ts";
import { dirname } from "node:path";
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

export interface LoggerOptions {
  /**
   * Every line also goes to this file, appended (its folder is created), and then only warnings and
   * errors still go to `stderr`: a person in the terminal sees problems, not the chatter.
   */
  file?: string;
  /** Where lines go without a file, and warnings and errors with one. Tests pass their own. */
  stderr?: NodeJS.WritableStream;
  /**
   * With `file`: called for each warning or error instead of writing it to `stderr`. The terminal
   * chat tells its person in one short line (platforms/console/attention.ts): JSON there is noise.
   */
  onProblem?: () => void;
}

/**
 * Structured logs on stderr (stdout belongs to the console chat), or in a file (see `file`). Known
 * secret fields are removed by path, and every line is scrubbed of token shapes before it is
 * written, whichever stream it goes to: the scrub is pino's `streamWrite` hook, which sees a line
 * before any destination, multistream included.
 *
 * The file is written asynchronously (SonicBoom, `pino.destination` with `sync: false`). pino flushes
 * it at exit: it registers the stream with on-exit-leak-free, which calls `flushSync()` on the
 * process `exit` event (so `process.exit()` and an uncaught exception lose nothing) and
 * `flush()` then `end()` on `beforeExit` (the event loop ran dry). A signal that ends the process
 * without an `exit` event (SIGINT or SIGTERM with no handler of its own, SIGKILL) loses what is still
 * buffered, which after a burst is most of it: whoever owns the process should turn SIGINT and
 * SIGTERM into `process.exit()`. The file is opened synchronously here, not by SonicBoom: a stream
 * still opening when the process exits throws "sonic boom is not ready yet" from that exit hook and
 * drops its lines.
 */
export function createLogger(level: string = "info", opts: LoggerOptions = {}): Logger {
  const stderr = (opts.stderr ?? process.stderr) as pino.DestinationStream;
  let destination = stderr;
  if (opts.file) {
    makeFolders(dirname(opts.file));
    const file = pino.destination({ dest: openSync(opts.file, "a"), sync: false });
    // A full disk or a lost mount must not end the process: say so, once, where a person looks.
    let told = false;
    file.on("error", (err: Error) => {
      if (!told) stderr.write(`cairn: cannot write the log file ${opts.file}: ${err.message}\n`);
      told = true;
    });
    // The logger's level filters first; the file takes what passes, stderr warnings and errors.
    const onProblem = opts.onProblem;
    destination = pino.multistream([
      { level: "trace", stream: file },
      { level: "warn", stream: onProblem ? { write: () => onProblem() } : stderr },
    ]);
  }
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
    destination,
  );
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: "silent" });

/** An error's message for a log field, whatever was thrown. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The console's log file, in the data folder: next to a SQLite database (`file:./data/cairn.db` gives
 * `./data/cairn.log`), else (PostgreSQL, an in-memory database) `./data/cairn.log`.
 */
export function consoleLogFile(databaseUrl: string): string {
  const path = databaseUrl.startsWith("file:") ? databaseUrl.slice("file:".length) : "";
  return `${path && path !== ":memory:" ? dirname(path) : "./data"}/cairn.log`;
}
