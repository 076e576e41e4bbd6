/** Maps the validated environment to the agent's settings. */
import { dirname, join } from "node:path";
import { PROJECT_ROOT } from "../ground/paths.ts";
import type { Config } from "./config.ts";
import type { AgentSettings } from "./agent-settings.ts";
import { accessPolicy } from "../admission/access.ts";
import { DEFAULT_LEARNING } from "../learning/settings.ts";
import { parseReportChannel } from "../report/channel.ts";

export const BUNDLED_SKILLS_DIR = join(PROJECT_ROOT, "skills");

export function agentSettings(cfg: Config): AgentSettings {
  return {
    model: cfg.CAIRN_MODEL,
    summaryModel: cfg.CAIRN_SUMMARY_MODEL,
    maxTokens: cfg.CAIRN_MAX_TOKENS,
    budgets: { user: cfg.CAIRN_MEMORY_USER_CHARS, channel: cfg.CAIRN_MEMORY_CHANNEL_CHARS, team: cfg.CAIRN_MEMORY_TEAM_CHARS },
    sessionIdleMs: cfg.CAIRN_SESSION_IDLE_MINUTES * 60_000,
    toolIterations: cfg.CAIRN_TOOL_ITERATIONS,
    providerDeadlineMs: cfg.CAIRN_PROVIDER_DEADLINE_MS,
    ...(cfg.CAIRN_EMBEDDINGS_URL && cfg.CAIRN_EMBEDDINGS_MODEL
      ? {
          embeddings: {
            url: cfg.CAIRN_EMBEDDINGS_URL,
            model: cfg.CAIRN_EMBEDDINGS_MODEL,
            apiKey: cfg.CAIRN_EMBEDDINGS_API_KEY,
            dimensions: cfg.CAIRN_EMBEDDINGS_DIMENSIONS,
            timeoutMs: 15_000,
            batch: cfg.CAIRN_EMBEDDINGS_BATCH,
            perMinute: cfg.CAIRN_EMBEDDINGS_PER_MINUTE,
          },
        }
      : {}),
    historyCharLimit: cfg.CAIRN_HISTORY_CHAR_LIMIT,
    historyKeepMessages: cfg.CAIRN_HISTORY_KEEP_MESSAGES,
    maxConcurrency: cfg.CAIRN_MAX_CONCURRENCY,
    journalInFlight: cfg.CAIRN_JOURNAL_IN_FLIGHT,
    leases: { leaseMs: cfg.CAIRN_TURN_LEASE_MS },
    recovery: { maxAgeMs: cfg.CAIRN_RECOVER_MAX_AGE_MINUTES * 60_000, orderWindowMs: cfg.CAIRN_ORDER_WINDOW_MS },
    access: accessPolicy({ admins: cfg.CAIRN_ADMINS, users: cfg.CAIRN_ALLOWED_USERS, channels: cfg.CAIRN_ALLOWED_CHANNELS, roles: cfg.CAIRN_ALLOWED_ROLES }),
    teamWrites: { mode: cfg.CAIRN_TEAM_WRITES, teachers: cfg.CAIRN_TEACHERS },
    screen: { enabled: cfg.CAIRN_SCREEN === "on", ...(cfg.CAIRN_SCREEN_MODEL ? { model: cfg.CAIRN_SCREEN_MODEL } : {}) },
    rateLimitPerHour: cfg.CAIRN_RATE_LIMIT_PER_HOUR,
    personaChars: cfg.CAIRN_PERSONA_CHARS,
    knowledge: {
      backfillDays: cfg.CAIRN_LISTEN_BACKFILL_DAYS,
      retentionDays: cfg.CAIRN_LISTEN_RETENTION_DAYS,
      membersTtlMs: cfg.CAIRN_LISTEN_MEMBERS_TTL_MINUTES * 60_000,
      channels: cfg.CAIRN_LISTEN_CHANNELS,
    },
    maxMessageChars: cfg.CAIRN_MAX_MESSAGE_CHARS,
    bundledSkillsDir: BUNDLED_SKILLS_DIR,
    schedules: { curator: cfg.CAIRN_CURATOR_CRON, report: cfg.CAIRN_REPORT_CRON, verify: cfg.CAIRN_VERIFY_CRON, remind: cfg.CAIRN_REMIND_CRON, timezone: cfg.CAIRN_TIMEZONE },
    learning: {
      reviewEveryTurns: cfg.CAIRN_REVIEW_EVERY_TURNS,
      skillReviewToolCalls: cfg.CAIRN_SKILL_REVIEW_TOOL_CALLS,
      reviewMinTurns: cfg.CAIRN_REVIEW_MIN_TURNS,
      reviewIdleMs: cfg.CAIRN_REVIEW_IDLE_MINUTES * 60_000,
      reviewModel: cfg.CAIRN_REVIEW_MODEL ?? null,
      reviewNotice: cfg.CAIRN_REVIEW_NOTICE,
      reviewMaxWrites: cfg.CAIRN_REVIEW_MAX_WRITES,
      correctionEmoji: cfg.CAIRN_CORRECTION_EMOJI,
      positiveEmoji: cfg.CAIRN_POSITIVE_EMOJI,
      ruleApprovals: cfg.CAIRN_RULE_APPROVALS,
      correctionWindowMs: cfg.CAIRN_CORRECTION_WINDOW_HOURS * 3_600_000,
      worker: { ...DEFAULT_LEARNING.worker, concurrency: cfg.CAIRN_JOB_CONCURRENCY },
      reportChannel: parseReportChannel(cfg.CAIRN_REPORT_CHANNEL),
      contradictions: cfg.CAIRN_CONTRADICTIONS === "on",
      modelPrices: cfg.CAIRN_MODEL_PRICES ?? {},
      freshness: { verifyDays: cfg.CAIRN_VERIFY_DAYS, decayDays: cfg.CAIRN_DECAY_DAYS, remindHours: cfg.CAIRN_APPROVAL_REMIND_HOURS },
      curator: { staleDays: cfg.CAIRN_CURATOR_STALE_DAYS, archiveDays: cfg.CAIRN_CURATOR_ARCHIVE_DAYS, lessonDays: cfg.CAIRN_CURATOR_LESSON_DAYS },
    },
  };
}

/** The inbound journal's folder: CAIRN_JOURNAL_DIR, else beside the SQLite file, else ./data/journal. */
export function journalDir(cfg: Pick<Config, "CAIRN_JOURNAL_DIR" | "DATABASE_URL">): string {
  if (cfg.CAIRN_JOURNAL_DIR) return cfg.CAIRN_JOURNAL_DIR;
  const file = cfg.DATABASE_URL.startsWith("file:") ? cfg.DATABASE_URL.slice("file:".length) : "";
  return join(file && file !== ":memory:" ? dirname(file) : "./data", "journal");
}

/**
 * The console's person is the operator at their own terminal: an admin there (issue 28), so
 * `/jobs run`, rollbacks and the rest can be tried alone, whatever CAIRN_ADMINS names.
 */
export function withConsoleOperator(settings: AgentSettings, user: string): AgentSettings {
  const access = settings.access;
  return { ...settings, access: { ...access, admins: new Set([...access.admins, `console:${user}`]) } };
}
