/**
 * Bolt, the WebClient and the SocketModeClient log through this adapter into cairn's pino logger,
 * so their warnings (rate limits, reconnects) land in the same JSON stream with a component tag.
 */
import { LogLevel, type Logger as BoltLogger } from "@slack/bolt";
import type { Logger } from "../../../ground/log.ts";

type Level = "trace" | "info" | "warn" | "error";

export function boltLogger(log: Logger): BoltLogger {
  const sdk = log.child({ component: "slack-sdk" });
  const write = (level: Level, args: unknown[]): void => {
    const [first, ...rest] = args;
    const msg = typeof first === "string" ? first : first instanceof Error ? first.message : describe(first);
    const details = rest.map((r) => (r instanceof Error ? { name: r.name, message: r.message } : r));
    sdk[level](details.length ? { details } : {}, msg);
  };
  return {
    // The SDKs' debug output is a request-by-request trace; it goes to pino's trace level.
    debug: (...args: unknown[]) => write("trace", args),
    info: (...args: unknown[]) => write("info", args),
    warn: (...args: unknown[]) => write("warn", args),
    error: (...args: unknown[]) => write("error", args),
    // The level is LOG_LEVEL's, set on the pino logger; the SDKs may not change it.
    setLevel: () => {},
    getLevel: () => {
      const level = sdk.levelVal;
      if (level <= 20) return LogLevel.DEBUG;
      if (level <= 30) return LogLevel.INFO;
      if (level <= 40) return LogLevel.WARN;
      return LogLevel.ERROR;
    },
    setName: () => {},
  };
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // Circular or otherwise unserializable: the SDK's message is not worth a crash.
    return String(value);
  }
}
