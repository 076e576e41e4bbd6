/** Wiring only: config -> database -> model -> core -> adapters. */
import { userInfo } from "node:os";
import dotenv from "dotenv";
import { ConfigError, loadConfig, MISSING_API_KEY_MESSAGE } from "./config.ts";
import { createLogger } from "./log.ts";
import { openDatabase } from "./db/client.ts";
import { createModelClient } from "./agent/model.ts";
import { Core } from "./agent/core.ts";
import { ConsoleAdapter } from "./platforms/console/console.ts";
import { agentSettings } from "./settings.ts";

async function main(): Promise<number> {
  dotenv.config({ quiet: true });
  let cfg;
  try {
    cfg = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (!cfg.ANTHROPIC_API_KEY) {
    process.stderr.write(`${MISSING_API_KEY_MESSAGE}\n`);
    return 2;
  }
  const log = createLogger(cfg.LOG_LEVEL);
  const database = await openDatabase(cfg.DATABASE_URL, {
    onConnectionError: (err) => log.warn({ err: err.message }, "database connection lost; the pool reconnects"),
  });
  if (database.migrations.applied.length) log.info({ applied: database.migrations.applied }, "migrations applied");
  const model = createModelClient({
    apiKey: cfg.ANTHROPIC_API_KEY,
    ...(cfg.ANTHROPIC_BASE_URL ? { baseURL: cfg.ANTHROPIC_BASE_URL } : {}),
    timeoutMs: cfg.CAIRN_MODEL_TIMEOUT_MS,
    maxAttempts: cfg.CAIRN_MODEL_MAX_ATTEMPTS,
    logger: log,
  });
  const core = new Core({ database, model, settings: agentSettings(cfg), log });
  await core.start();

  const platforms = [cfg.SLACK_BOT_TOKEN && "Slack", cfg.DISCORD_TOKEN && "Discord"].filter(Boolean);
  if (platforms.length) log.warn({ platforms }, "platform tokens are set, but this build has only the console adapter");
  const console = new ConsoleAdapter(core, {
    input: process.stdin,
    output: process.stdout,
    user: cfg.CAIRN_CONSOLE_USER ?? userInfo().username,
    prompt: process.stdin.isTTY === true,
  });
  await console.run();
  await database.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cairn stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
