/** Wiring only: config -> database -> model -> core -> adapters. */
import { userInfo } from "node:os";
import dotenv from "dotenv";
import { ConfigError, loadConfig, MISSING_API_KEY_MESSAGE } from "./app/config.ts";
import { consoleLogFile, createLogger, errText, type Logger } from "./ground/log.ts";
import { databaseProblem, keyRefusedProblem, listenProblem, StartupError } from "./app/startup-errors.ts";
import { openDatabase } from "./db/client.ts";
import { createModelClient } from "./agent/model.ts";
import { checkModelKey, type KeyCheck } from "./agent/key-check.ts";
import { Core } from "./app/core.ts";
import type { ConsoleAdapter } from "./platforms/console/console.ts";
import { Attention } from "./platforms/console/attention.ts";
import { agentSettings, withConsoleOperator } from "./app/settings.ts";
import { slackSettings } from "./app/slack-settings.ts";
import type { PlatformAdapter } from "./ground/adapter.ts";
import { Metrics } from "./ops/metrics.ts";
import { healthRoutes } from "./ops/health.ts";
import { MigrationStore } from "./ops/migration-store.ts";
import { startHealthServer, type HealthServer } from "./ops/server.ts";
import { FileJournal, JournalOpenError } from "./journal/file-journal.ts";
import { journalDir } from "./app/settings.ts";

/** A signal this soon after the first is the same request arriving again, not a second one. */
const REPEATED_SIGNAL_MS = 2_000;
/** The start-up key check's one attempt: long enough for a slow API, short enough not to stall start-up. */
const KEY_CHECK_TIMEOUT_MS = 15_000;

/**
 * Resolves on the first SIGINT or SIGTERM: platform adapters run until the process is asked to
 * stop. Under `npm start` a service manager's signal to the process group reaches cairn more than
 * once within milliseconds (from the group, and relayed by npm): those repeats are ignored,
 * so they cannot cut the orderly stop short (bounded by CAIRN_STOP_TIMEOUT_MS anyway). A signal
 * later than that is a person insisting: `onInsist` runs (it exits at once).
 */
function untilStopped(onRepeat: (signal: string) => void, onInsist: (signal: string) => void): Promise<string> {
  return new Promise((resolve) => {
    let firstAt: number | null = null;
    const on = (signal: string) => () => {
      if (firstAt === null) {
        firstAt = Date.now();
        return resolve(signal);
      }
      if (Date.now() - firstAt < REPEATED_SIGNAL_MS) onRepeat(signal);
      else onInsist(signal);
    };
    process.on("SIGINT", on("SIGINT"));
    process.on("SIGTERM", on("SIGTERM"));
  });
}

async function main(): Promise<number> {
  // Listened for from the first moment: a SIGTERM during start-up (systemd stopping a replica that
  // is still connecting) then stops cairn cleanly once it is up, instead of killing node mid-way.
  let stopLog: Logger | null = null;
  const stopped = untilStopped(
    (signal) => stopLog?.info({ signal }, "already stopping"),
    (signal) => {
      process.stderr.write(`cairn: ${signal} again, stopping now; turns in flight are answered by the next process to start\n`);
      process.exit(130);
    },
  );
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
  const slack = slackSettings(cfg);
  const discordOn = Boolean(cfg.DISCORD_TOKEN && cfg.DISCORD_APPLICATION_ID);
  const consoleMode = !slack && !discordOn;
  // In the console, logs go to a file in the data folder (warnings and errors still to stderr), so
  // the chat stays readable. A person at a terminal gets one short line for those instead of JSON
  // (platforms/console/attention.ts); a pipe or a file still gets the JSON lines.
  const logFile = consoleMode ? consoleLogFile(cfg.DATABASE_URL) : null;
  const attention = logFile && process.stderr.isTTY === true ? new Attention(logFile, (line) => void process.stderr.write(`${line}\n`)) : null;
  let log;
  try {
    log = createLogger(cfg.LOG_LEVEL, logFile ? { file: logFile, ...(attention ? { onProblem: () => attention.seen() } : {}) } : {});
    stopLog = log;
  } catch (err) {
    throw new StartupError(`could not write the log file ${logFile} (${err instanceof Error ? err.message : String(err)}): make its folder writable, or set DATABASE_URL to a file in a writable folder.`, { cause: err });
  }
  const database = await openDatabase(cfg.DATABASE_URL, {
    onConnectionError: (err) => log.warn({ err: err.message }, "database connection lost; the pool reconnects"),
  }).catch((err: unknown) => {
    throw new StartupError(databaseProblem(cfg.DATABASE_URL, err), { cause: err });
  });
  if (database.migrations.applied.length) log.info({ applied: database.migrations.applied }, "migrations applied");
  const model = createModelClient({
    apiKey: cfg.ANTHROPIC_API_KEY,
    ...(cfg.ANTHROPIC_BASE_URL ? { baseURL: cfg.ANTHROPIC_BASE_URL } : {}),
    timeoutMs: cfg.CAIRN_MODEL_TIMEOUT_MS,
    maxAttempts: cfg.CAIRN_MODEL_MAX_ATTEMPTS,
    logger: log,
  });
  // The key is tried while the rest starts (one attempt, bounded): a refused one stops start-up
  // below, before any platform connects; anything else only warns (src/agent/key-check.ts).
  const keyCheck: Promise<KeyCheck> | null =
    cfg.CAIRN_CHECK_KEY === "on"
      ? checkModelKey(
          createModelClient({ apiKey: cfg.ANTHROPIC_API_KEY, ...(cfg.ANTHROPIC_BASE_URL ? { baseURL: cfg.ANTHROPIC_BASE_URL } : {}), timeoutMs: KEY_CHECK_TIMEOUT_MS, maxAttempts: 1 }),
          cfg.CAIRN_SUMMARY_MODEL,
          KEY_CHECK_TIMEOUT_MS,
        )
      : null;
  const metrics = new Metrics();
  // A rejection some library leaves unhandled (a platform client's event handler meeting a payload
  // it did not expect) is logged and counted, not allowed to end the process: that would cut every
  // turn in flight short for one bad event, and a platform delivering it again would stop each
  // replica in turn. Thrown exceptions still end it (their state is unknown); recovery takes over.
  process.on("unhandledRejection", (reason) => {
    log.error({ err: errText(reason) }, "unhandled promise rejection; cairn keeps running");
    metrics.error("unhandled");
  });
  // Every platform's message is kept here before the platform is acknowledged (src/journal/): a
  // folder that cannot be written stops start-up with one sentence. The console acknowledges nothing.
  const kept = consoleMode
    ? null
    : await FileJournal.open(journalDir(cfg), { maxBytes: cfg.CAIRN_JOURNAL_MAX_BYTES }).catch(async (err: unknown) => {
        await database.close();
        throw err instanceof JournalOpenError ? new StartupError(err.message, { cause: err }) : err;
      });
  if (kept?.pending.length) log.info({ pending: kept.pending.length }, "the journal holds messages an earlier process kept; they are answered now");
  const consoleUser = cfg.CAIRN_CONSOLE_USER ?? userInfo().username;
  const settings = consoleMode ? withConsoleOperator(agentSettings(cfg), consoleUser) : agentSettings(cfg);
  const core = new Core({ database, model, settings, log, metrics, ...(kept ? { journal: { backend: kept.journal, pending: kept.pending } } : {}) });

  // The configured platforms, made now so that /readyz names them (not connected) from the start.
  // Each is attached to the core (its replies and the core's own posts go through it), then started.
  const adapters: PlatformAdapter[] = [];
  // /healthz, /readyz and /metrics: beside /slack/events in Slack's HTTP mode, and on CAIRN_HEALTH_PORT when set.
  const routes = healthRoutes({ database: new MigrationStore(database), metrics, log, adapters: () => platforms, journal: () => core.journal });
  // Adapters wait a little longer than the core for answers in flight: the core hands back what is
  // left before they disconnect.
  const adapterDrainMs = cfg.CAIRN_STOP_TIMEOUT_MS + 2_000;
  // Each platform's client library is loaded only when that platform is configured: discord.js and
  // Bolt are large (tens of MB resident each once loaded), and a process never uses an unconfigured one.
  if (slack) {
    const { slackAdapter } = await import("./platforms/slack/adapter.ts");
    adapters.push(slackAdapter({ ...slack, routes, drainMs: adapterDrainMs }, log));
  }
  if (discordOn && cfg.DISCORD_TOKEN && cfg.DISCORD_APPLICATION_ID) {
    const { discordAdapter } = await import("./platforms/discord/adapter.ts");
    adapters.push(
      discordAdapter(
        { token: cfg.DISCORD_TOKEN, applicationId: cfg.DISCORD_APPLICATION_ID, allowMassMentions: cfg.CAIRN_ALLOW_MASS_MENTIONS, ...(cfg.DISCORD_API_URL ? { apiUrl: cfg.DISCORD_API_URL } : {}) },
        log,
        { shutdownGraceMs: adapterDrainMs },
      ),
    );
  }
  // No platform configured: the console chat (it attaches and starts itself in `run`).
  const chat: ConsoleAdapter | null = consoleMode
    ? new (await import("./platforms/console/console.ts")).ConsoleAdapter({
        input: process.stdin,
        output: process.stdout,
        user: consoleUser,
        prompt: process.stdin.isTTY === true,
        color: process.stdout.isTTY === true,
        terminal: process.stdin.isTTY === true && process.stdout.isTTY === true,
      })
    : null;
  const platforms: readonly PlatformAdapter[] = chat ? [...adapters, chat] : adapters;
  // In the terminal chat, a problem's line prints above the prompt, not across it.
  if (chat && attention && process.stdin.isTTY === true && process.stdout.isTTY === true) attention.sink = (line) => chat.notice(line);

  let health: HealthServer | null = null;
  if (cfg.CAIRN_HEALTH_PORT !== undefined) {
    const port = cfg.CAIRN_HEALTH_PORT;
    health = await startHealthServer(routes, { port, ...(cfg.CAIRN_HEALTH_HOST ? { host: cfg.CAIRN_HEALTH_HOST } : {}) }).catch(async (err: unknown) => {
      await database.close();
      throw new StartupError(listenProblem(err, port, "CAIRN_HEALTH_PORT", "CAIRN_HEALTH_HOST") ?? `could not serve CAIRN_HEALTH_PORT ${port}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
    log.info({ port: health.port }, "health and metrics endpoints listening");
  }
  const checked = await keyCheck;
  if (checked?.outcome === "refused") {
    await health?.close();
    await database.close();
    throw new StartupError(keyRefusedProblem(checked.status, cfg.ANTHROPIC_BASE_URL));
  }
  if (checked?.outcome === "unchecked") log.warn({ err: checked.reason }, "could not confirm ANTHROPIC_API_KEY at start-up (it was not refused); starting anyway");
  await core.start();

  for (const adapter of adapters) {
    await adapter.start(core.attach(adapter)).catch(async (err: unknown) => {
      await health?.close();
      await database.close();
      // The platforms' own start-up errors are sentences already ("Slack rejected SLACK_BOT_TOKEN ...").
      throw new StartupError(listenProblem(err, cfg.PORT) ?? `${adapter.platform} did not start: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
    log.info(`${adapter.platform} adapter started`);
  }
  // Reviews, reactions, lessons and the scheduled curator and report run on the job worker, after
  // replies, never in front of them.
  await core.startBackground();
  if (!chat) log.info({ platforms: adapters.map((a) => a.platform) }, "cairn is up; if something looks wrong, `npm run doctor` checks the settings, the database and the platforms");
  if (chat) {
    // The console chat, until the input ends, /quit, or a signal. A signal exits through
    // process.exit, so the log file's buffered lines are flushed.
    void stopped.then(() => process.exit(0));
    await chat.run(core);
  } else {
    const signal = await stopped;
    log.info({ signal }, "stopping");
    // Stop receiving first; answers in flight get CAIRN_STOP_TIMEOUT_MS to reach the platform, the
    // rest are handed back through their leases (another replica, or the next start, answers them)
    // before the adapters disconnect; then the database closes.
    const stopping = adapters.map((adapter) => adapter.stop());
    await core.drainTurns(cfg.CAIRN_STOP_TIMEOUT_MS);
    await Promise.allSettled(stopping);
  }
  // Jobs under way get a moment to finish; the rest are handed back through their leases.
  await core.stopBackground(5_000);
  await health?.close();
  // What is still kept (messages not stored) stays on disk for the next start.
  await core.journal.close();
  await database.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // What a person can fix is one sentence; anything else is a bug and keeps its stack.
    const said =
      err instanceof StartupError
        ? `cairn could not start: ${err.message}`
        : `cairn stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n\`npm run doctor\` checks the settings, the database and the platforms.`;
    process.stderr.write(`${said}\n`);
    process.exit(1);
  },
);
