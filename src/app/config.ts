/**
 * One zod schema for the whole environment. What each setting does is in setting-notes.ts, from which
 * `npm run docs:settings` writes .env.example and the table in docs/operations.md; a wrong
 * value fails start-up with the variable's name and what was expected.
 */
import { z } from "zod";
import { REPORT_CHANNEL_HINT, REPORT_CHANNEL_PATTERN } from "../report/channel.ts";
import cron from "node-cron";
import { DEFAULT_SCHEDULES, timeZoneOf } from "../jobs/schedules.ts";
import { LISTEN_CHANNEL } from "../knowledge/listen-channel.ts";

const WHOLE = "must be a whole number";
/**
 * A whole number from `min` to `max`; empty or unset = `def`. Its problems are worded as the end of
 * a sentence ("must be a whole number"): checkConfig puts the variable's name before them.
 */
const int = (def: number, min: number, max: number) => {
  const range = { message: `must be between ${min} and ${max}` };
  return optionalString.pipe(z.coerce.number<string | undefined>({ message: WHOLE }).int({ message: WHOLE }).min(min, range).max(max, range).default(def));
};
const optionalString = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === "" ? undefined : v));
const csv = z
  .string()
  .optional()
  .transform((v) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean));

const PRICES_HINT = 'must be JSON like {"claude-sonnet-5-5": {"input": 3, "output": 15}} (USD per million tokens)';
const usd = z.number({ message: PRICES_HINT }).nonnegative({ message: PRICES_HINT });
/** Model prices for the weekly report's cost estimate, merged over report/prices.ts; unset = none. */
const modelPrices = optionalString
  .transform((v, ctx): unknown => {
    if (v === undefined) return undefined;
    try {
      return JSON.parse(v);
    } catch {
      ctx.addIssue({ code: "custom", message: PRICES_HINT });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().min(1), z.object({ input: usd, output: usd, cacheRead: usd.optional(), cacheWrite: usd.optional() }, { message: PRICES_HINT }), { message: PRICES_HINT }).optional());

/** true/false (also 1/0, yes/no, on/off, any case); empty or unset = `def`. */
const flag = (def: boolean) =>
  optionalString
    .transform((v) => v?.toLowerCase())
    .pipe(z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"], { message: "expected true or false" }).optional())
    .transform((v) => (v === undefined ? def : ["true", "1", "yes", "on"].includes(v)));
/** A TCP port; empty or unset = none. */
const optionalPort = optionalString.pipe(
  z.coerce
    .number<string | undefined>({ message: "expected a port number" })
    .int({ message: "expected a port from 1 to 65535" })
    .min(1, { message: "expected a port from 1 to 65535" })
    .max(65_535, { message: "expected a port from 1 to 65535" })
    .optional(),
);

const discordId = z.string().regex(/^\d{17,20}$/, { message: "expected a Discord id (17 to 20 digits)" });

/** A node-cron expression: five fields, or six with seconds first; empty or unset = `def`. */
const cronExpression = (def: string) =>
  optionalString
    .transform((v) => v ?? def)
    .superRefine((v, ctx) => {
      if (cron.validate(v)) return;
      // validate() says only yes or no; validateDetailed() says which field is wrong.
      const detail = cron.validateDetailed(v).errors[0]?.message;
      ctx.addIssue({ code: "custom", message: `expected a cron expression like "${def}" (minute hour day-of-month month weekday, optionally seconds first)${detail ? `: ${detail}` : ""}` });
    });

/** An IANA zone, in its canonical spelling; empty or unset = UTC. */
const timeZone = optionalString.transform((v, ctx) => {
  const zone = timeZoneOf(v ?? DEFAULT_SCHEDULES.timezone);
  if (zone) return zone;
  ctx.addIssue({ code: "custom", message: "expected an IANA time zone like Europe/Paris, America/New_York or UTC" });
  return z.NEVER;
});

const databaseUrl = z
  .string()
  .default("file:./data/cairn.db")
  .refine((v) => v.startsWith("file:") || /^postgres(ql)?:\/\//.test(v), {
    message: "expected file:PATH (SQLite) or postgresql://USER@HOST:PORT/DB",
  });

export const configSchema = z.object({
  DATABASE_URL: databaseUrl,
  ANTHROPIC_API_KEY: optionalString,
  ANTHROPIC_BASE_URL: optionalString.pipe(z.url({ message: "expected a URL like https://api.anthropic.com" }).optional()),
  CAIRN_MODEL: z.string().min(1).default("claude-sonnet-5-5"),
  // Summaries of older turns (compression): a small model is enough.
  CAIRN_SUMMARY_MODEL: z.string().min(1).default("claude-haiku-5-5"),
  // The background review and lesson distillation; unset = CAIRN_MODEL (reuses the cached prompt).
  CAIRN_REVIEW_MODEL: optionalString,
  CAIRN_REVIEW_EVERY_TURNS: int(10, 0, 1_000),
  CAIRN_SKILL_REVIEW_TOOL_CALLS: int(10, 0, 1_000),
  // A memory review when a conversation ends (/new, or quiet this long) with this many person messages since the last.
  CAIRN_REVIEW_MIN_TURNS: int(3, 0, 1_000),
  CAIRN_REVIEW_IDLE_MINUTES: int(30, 1, 7 * 24 * 60),
  CAIRN_REVIEW_NOTICE: z.enum(["off", "brief", "verbose"]).default("brief"),
  CAIRN_REVIEW_MAX_WRITES: int(3, 0, 50),
  CAIRN_CORRECTION_EMOJI: csv.transform((v) => (v.length ? v : ["👎", "❌"])),
  CAIRN_POSITIVE_EMOJI: csv.transform((v) => (v.length ? v : ["👍", "✅", "⭐", "🎉"])),
  CAIRN_RULE_APPROVALS: int(1, 1, 20),
  CAIRN_CORRECTION_WINDOW_HOURS: int(24, 1, 24 * 30),
  CAIRN_JOB_CONCURRENCY: int(2, 1, 32),
  // The curator: agent-made skills unused this long go stale, then archived; agent-made lessons archived.
  CAIRN_CURATOR_STALE_DAYS: int(14, 1, 365),
  CAIRN_CURATOR_ARCHIVE_DAYS: int(30, 2, 730),
  CAIRN_CURATOR_LESSON_DAYS: int(60, 1, 3_650),
  CAIRN_MAX_TOKENS: int(4096, 256, 64_000),
  CAIRN_MODEL_TIMEOUT_MS: int(120_000, 1_000, 600_000),
  CAIRN_MODEL_MAX_ATTEMPTS: int(4, 1, 10),
  /** One 1-token request at start-up (src/agent/key-check.ts): a refused key stops start-up. On unless "off". */
  CAIRN_CHECK_KEY: optionalString.transform((v) => v?.toLowerCase()).pipe(z.enum(["on", "off"], { message: "expected on (the default) or off" }).default("on")),
  CAIRN_MEMORY_USER_CHARS: int(1375, 200, 20_000),
  CAIRN_MEMORY_CHANNEL_CHARS: int(1500, 200, 20_000),
  CAIRN_MEMORY_TEAM_CHARS: int(2200, 200, 40_000),
  CAIRN_PERSONA_CHARS: int(1500, 100, 20_000),
  CAIRN_LISTEN_BACKFILL_DAYS: int(90, 0, 3650),
  CAIRN_LISTEN_RETENTION_DAYS: int(0, 0, 36500),
  CAIRN_LISTEN_MEMBERS_TTL_MINUTES: int(10, 1, 1440),
  CAIRN_LISTEN_CHANNELS: csv.refine((list) => list.every((c) => LISTEN_CHANNEL.test(c)), "each entry is platform:workspace/channel, e.g. slack:T0123/C0456 or discord:<guild id>/<channel id>"),
  CAIRN_SESSION_IDLE_MINUTES: int(120, 1, 7 * 24 * 60),
  CAIRN_TOOL_ITERATIONS: int(20, 1, 100),
  /** How long a turn waits for memory providers' items before going on without them (src/providers/). */
  CAIRN_PROVIDER_DEADLINE_MS: int(300, 10, 10_000),
  CAIRN_EMBEDDINGS_URL: optionalString.pipe(z.url({ message: "expected the embeddings API's base URL, like https://host/v1 (cairn posts to <url>/embeddings)" }).optional()),
  CAIRN_EMBEDDINGS_MODEL: optionalString,
  CAIRN_EMBEDDINGS_API_KEY: optionalString,
  CAIRN_EMBEDDINGS_DIMENSIONS: optionalString.pipe(z.coerce.number<string | undefined>({ message: WHOLE }).int({ message: WHOLE }).min(8, { message: "must be between 8 and 8192" }).max(8192, { message: "must be between 8 and 8192" }).optional()),
  CAIRN_EMBEDDINGS_BATCH: int(32, 1, 2048),
  CAIRN_EMBEDDINGS_PER_MINUTE: int(60, 1, 100_000),
  CAIRN_HISTORY_CHAR_LIMIT: int(48_000, 2_000, 1_000_000),
  CAIRN_HISTORY_KEEP_MESSAGES: int(10, 2, 200),
  // Conversations answered at once. A turn mostly waits on the model, so the bound that matters is
  // the model's rate limit (429s are retried after their retry-after), not this process: see docs/operations.md.
  CAIRN_MAX_CONCURRENCY: int(64, 1, 1_024),
  // Crash recovery and stopping (src/core/leases.ts, recovery.ts): a dead process's turns are taken
  // over once their leases (renewed every third of their length) run out; a lost message older than
  // CAIRN_RECOVER_MAX_AGE_MINUTES is not answered late (the person is asked to repeat it).
  CAIRN_TURN_LEASE_MS: int(20_000, 1_000, 600_000),
  CAIRN_RECOVER_MAX_AGE_MINUTES: int(10, 1, 7 * 24 * 60),
  // Several replicas: how old a message must be before its turn starts, so one sent just before it
  // but delivered to another replica is stored, and answered, first (0: one process, no wait).
  CAIRN_ORDER_WINDOW_MS: int(0, 0, 10_000),
  // SIGTERM: how long turns in flight may finish before the rest are handed back through their leases.
  CAIRN_STOP_TIMEOUT_MS: int(25_000, 0, 600_000),
  // The inbound journal (src/journal/): every platform's message is kept here on local disk before
  // the platform is acknowledged. One folder per process (a replica's own); default: beside the
  // SQLite file, or ./data/journal.
  CAIRN_JOURNAL_DIR: optionalString,
  CAIRN_JOURNAL_MAX_BYTES: int(64 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
  // Kept messages handed to the turns at once; the rest wait on disk (a burst does not fill memory).
  CAIRN_JOURNAL_IN_FLIGHT: int(64, 1, 4_096),
  CAIRN_CONSOLE_USER: optionalString,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // Platform settings: src/app/slack-settings.ts and main.ts hand them to the adapters.
  SLACK_BOT_TOKEN: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_API_URL: optionalString,
  PORT: int(3000, 1, 65_535),
  // /healthz, /readyz and /metrics on a port of their own, in every mode (Slack's HTTP mode also serves them on PORT).
  CAIRN_HEALTH_PORT: optionalPort,
  CAIRN_HEALTH_HOST: optionalString,
  DISCORD_TOKEN: optionalString,
  DISCORD_APPLICATION_ID: optionalString.pipe(discordId.optional()),
  DISCORD_API_URL: optionalString.pipe(z.url({ message: "expected a URL like https://discord.com/api" }).optional()),
  DISCORD_GUILD_ID: optionalString.pipe(discordId.optional()),
  CAIRN_REPORT_CHANNEL: optionalString.pipe(z.string().regex(REPORT_CHANNEL_PATTERN, { message: REPORT_CHANNEL_HINT }).optional()),
  // Schedules (node-cron; six fields when seconds are wanted), read in CAIRN_TIMEZONE.
  CAIRN_CURATOR_CRON: cronExpression(DEFAULT_SCHEDULES.curator),
  CAIRN_REPORT_CRON: cronExpression(DEFAULT_SCHEDULES.report),
  CAIRN_MODEL_PRICES: modelPrices,
  CAIRN_VERIFY_CRON: cronExpression(DEFAULT_SCHEDULES.verify),
  CAIRN_REMIND_CRON: cronExpression(DEFAULT_SCHEDULES.remind),
  // Memory that stays true (issue 27): shared items unconfirmed this long show their date and are
  // listed for review; lessons and rules unused this long with low confidence are proposed for archiving.
  CAIRN_VERIFY_DAYS: int(90, 1, 3650),
  CAIRN_DECAY_DAYS: int(180, 1, 3650),
  // A proposal waiting longer than this is reminded once in its thread and listed to admins.
  CAIRN_APPROVAL_REMIND_HOURS: int(24, 1, 24 * 365),
  CAIRN_TIMEZONE: timeZone,
  CAIRN_ADMINS: csv,
  // Who may share with the whole workspace without a teammate's approval (issue 26): platform-prefixed
  // ids like CAIRN_ADMINS; `/cairn teachers add` names more. `open`: every team write at once, as before.
  CAIRN_TEACHERS: csv.pipe(z.array(z.string().regex(/^(slack|discord|console):\S+$/, { message: "expected platform-prefixed ids like slack:U0123, discord:1234" }))),
  CAIRN_TEAM_WRITES: optionalString.transform((v) => v?.toLowerCase()).pipe(z.enum(["approval", "open"], { message: "expected approval (the default) or open" }).default("approval")),
  /** The model-judged screen of shared writes (src/safety/screen.ts): on unless "off". */
  CAIRN_SCREEN: optionalString.transform((v) => v?.toLowerCase()).pipe(z.enum(["on", "off"], { message: "expected on (the default) or off" }).default("on")),
  /** The contradiction check of entries coming into force (issue 27; summary model): on unless "off". */
  CAIRN_CONTRADICTIONS: optionalString.transform((v) => v?.toLowerCase()).pipe(z.enum(["on", "off"], { message: "expected on (the default) or off" }).default("on")),
  /** The screen's model; the summary model when unset. */
  CAIRN_SCREEN_MODEL: optionalString,
  // Access: platform-prefixed ids ("slack:U123", "discord:456", "console:dana"). Unset = everyone
  // in a workspace the bot is installed in.
  CAIRN_ALLOWED_USERS: csv,
  CAIRN_ALLOWED_CHANNELS: csv,
  CAIRN_ALLOWED_ROLES: csv,
  CAIRN_RATE_LIMIT_PER_HOUR: int(120, 0, 100_000),
  // Replies may ping a whole channel (Slack <!channel> <!here> <!everyone> <!subteam^…>, Discord
  // @everyone @here and roles). Off by default: anyone can ask cairn to repeat one.
  CAIRN_ALLOW_MASS_MENTIONS: flag(false),
  CAIRN_MAX_MESSAGE_CHARS: int(20_000, 1_000, 1_000_000),
});

export type Config = z.infer<typeof configSchema>;

/** A problem of settings valid one by one but not together, and the variables it is about. */
interface CrossProblem {
  keys: readonly (keyof Config)[];
  text: string;
}

/** Settings that are valid one by one but not together. */
function crossCheck(cfg: Config): CrossProblem[] {
  const problems: CrossProblem[] = [];
  if (cfg.SLACK_BOT_TOKEN && !cfg.SLACK_APP_TOKEN && !cfg.SLACK_SIGNING_SECRET) {
    problems.push({ keys: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"], text: "SLACK_BOT_TOKEN is set, but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP mode) is: set one of them" });
  }
  if ((cfg.SLACK_APP_TOKEN || cfg.SLACK_SIGNING_SECRET) && !cfg.SLACK_BOT_TOKEN) {
    problems.push({ keys: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"], text: "SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set without SLACK_BOT_TOKEN: set the bot token (xoxb-...) too" });
  }
  if (cfg.DISCORD_TOKEN && !cfg.DISCORD_APPLICATION_ID) {
    problems.push({ keys: ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID"], text: "DISCORD_TOKEN is set without DISCORD_APPLICATION_ID: copy the application id from the developer portal" });
  }
  if (cfg.CAIRN_HEALTH_PORT !== undefined && cfg.CAIRN_HEALTH_PORT === cfg.PORT && cfg.SLACK_BOT_TOKEN && cfg.SLACK_SIGNING_SECRET && !cfg.SLACK_APP_TOKEN) {
    problems.push({ keys: ["CAIRN_HEALTH_PORT", "PORT"], text: "CAIRN_HEALTH_PORT is PORT, where Slack's HTTP mode already serves /healthz, /readyz and /metrics: unset CAIRN_HEALTH_PORT or choose another port" });
  }
  if (cfg.CAIRN_EMBEDDINGS_URL && !cfg.CAIRN_EMBEDDINGS_MODEL) {
    problems.push({ keys: ["CAIRN_EMBEDDINGS_URL", "CAIRN_EMBEDDINGS_MODEL"], text: "CAIRN_EMBEDDINGS_URL is set without CAIRN_EMBEDDINGS_MODEL: name the embedding model the endpoint serves" });
  }
  if (cfg.CAIRN_CURATOR_ARCHIVE_DAYS <= cfg.CAIRN_CURATOR_STALE_DAYS) {
    problems.push({ keys: ["CAIRN_CURATOR_ARCHIVE_DAYS", "CAIRN_CURATOR_STALE_DAYS"], text: "CAIRN_CURATOR_ARCHIVE_DAYS must be more than CAIRN_CURATOR_STALE_DAYS: a skill goes stale before it is archived" });
  }
  return problems;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`cairn cannot start: invalid settings\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface ConfigCheck {
  /** The settings, each invalid one at its default; null only if even that is not valid. */
  config: Config | null;
  /** Every problem: each invalid variable, then settings that disagree with each other. */
  problems: string[];
  /** The variables whose values are invalid. */
  invalid: ReadonlySet<string>;
}

/**
 * Every problem of the environment at once, not the first: each invalid variable, and the settings
 * that disagree among those that are valid (read with the invalid ones at their defaults).
 */
export function checkConfig(env: Record<string, string | undefined> = process.env): ConfigCheck {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return { config: parsed.data, problems: crossCheck(parsed.data).map((p) => p.text), invalid: new Set() };
  const invalid = new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? "")));
  const problems = parsed.error.issues.map((issue) => {
    const name = issue.path.join(".") || "(environment)";
    const raw = env[String(issue.path[0])];
    // A number's problem reads as one sentence: 'X must be a whole number, got "lots"', '... got 500'.
    if (issue.message.startsWith("must be ")) {
      const got = issue.code === "too_small" || issue.code === "too_big" ? String(raw ?? "").trim() : JSON.stringify(raw ?? null);
      return `${name} ${issue.message}, got ${got}`;
    }
    return `${name}: ${issue.message} (got ${JSON.stringify(raw ?? null)})`;
  });
  const rest = configSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([key]) => !invalid.has(key))));
  if (!rest.success) return { config: null, problems, invalid };
  const crossed = crossCheck(rest.data).filter((p) => p.keys.every((key) => !invalid.has(key)));
  return { config: rest.data, problems: [...problems, ...crossed.map((p) => p.text)], invalid };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const { config, problems } = checkConfig(env);
  if (problems.length > 0 || !config) throw new ConfigError(problems);
  return config;
}

/** The message shown when no model access is configured: the one thing a newcomer must set. */
export const MISSING_API_KEY_MESSAGE = [
  "cairn needs a Claude API key to answer. Set ANTHROPIC_API_KEY (in the environment or in .env).",
  "ANTHROPIC_BASE_URL may point at any Anthropic-compatible endpoint (a proxy or gateway).",
  "Optional: CAIRN_MODEL, CAIRN_SUMMARY_MODEL, DATABASE_URL; Slack: SLACK_BOT_TOKEN with SLACK_APP_TOKEN",
  "or SLACK_SIGNING_SECRET; Discord: DISCORD_TOKEN, DISCORD_APPLICATION_ID. See .env.example.",
].join("\n");
