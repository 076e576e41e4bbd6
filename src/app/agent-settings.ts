/**
 * What cairn is built from: its settings (from the environment: src/settings.ts) and its
 * dependencies (the database, the model, a logger). The top reads them; the services below get
 * only the fields they need.
 */
import type { Database } from "../db/client.ts";
import type { Logger } from "../ground/log.ts";
import type { MemoryBudgets } from "../memory/store.ts";
import type { AccessPolicy } from "../admission/access.ts";
import type { TeamWriteSettings } from "../admission/trust.ts";
import type { ModelClient } from "../agent/model.ts";
import type { LeaseSettings } from "../turn/leases.ts";
import type { RecoverySettings } from "../turn/recovery.ts";
import type { LearningSettings } from "../learning/settings.ts";
import type { JobHandler } from "../jobs/worker.ts";
import type { ScheduleSettings } from "../jobs/schedules.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { KnowledgeSettings } from "../knowledge/knowledge.ts";
import type { JournalBackend, StoredEntry } from "../journal/inbound-log.ts";
import type { MemoryProvider } from "../ground/memory-provider.ts";
import type { EmbeddingsSettings } from "../providers/embeddings/client.ts";

export interface AgentSettings {
  model: string;
  summaryModel: string;
  maxTokens: number;
  budgets: MemoryBudgets;
  sessionIdleMs: number;
  toolIterations: number;
  historyCharLimit: number;
  historyKeepMessages: number;
  maxConcurrency: number;
  /** Who may talk to cairn, where, and who is an admin. */
  access: AccessPolicy;
  /** How far a team write reaches without a teammate's approval, and who is trusted (default DEFAULT_TEAM_WRITES: approval, none). */
  teamWrites?: Partial<TeamWriteSettings>;
  /** The model-judged screen of shared writes; absent or disabled, writes pass the patterns only. */
  screen?: { enabled: boolean; model?: string; timeoutMs?: number };
  /** Messages per person per hour; 0 = unlimited. */
  rateLimitPerHour: number;
  /** The team persona's budget in characters (default DEFAULT_PERSONA_CHARS). */
  personaChars?: number;
  /** The longest message read whole; longer ones are cut with a note to the person (default 20,000). */
  maxMessageChars?: number;
  /** Where bundled skills are read from; null skips the import (tests that want an empty library). */
  bundledSkillsDir: string | null;
  /** The learning loop: reviews, corrections, rules, the job worker (default DEFAULT_LEARNING). */
  learning?: Partial<LearningSettings>;
  /** Channel knowledge: backfill depth, retention, channels listened in from start-up (default DEFAULT_KNOWLEDGE). */
  knowledge?: Partial<KnowledgeSettings>;
  /** When the curator and the report run, and the zone their expressions are read in (default DEFAULT_SCHEDULES). */
  schedules?: Partial<ScheduleSettings>;
  /** Turn leases: how long a dead process's turns wait for another (default DEFAULT_LEASES). */
  leases?: Partial<LeaseSettings>;
  /** Lost turns: how old one may be and still be answered (default DEFAULT_RECOVERY). */
  recovery?: Partial<RecoverySettings>;
  /** Kept events handed to the adapters at once; the rest wait in the journal (default 64). */
  journalInFlight?: number;
  /** How long a turn waits for memory providers' items (default DEFAULT_PROVIDER_DEADLINE_MS); a search for its query's vector too. */
  providerDeadlineMs?: number;
  /** The embeddings endpoint (providers/embeddings/): unset, no vectors and words alone, as before. */
  embeddings?: EmbeddingsSettings & { batch?: number; perMinute?: number };
}

export interface CoreDeps {
  database: Database;
  model: ModelClient;
  settings: AgentSettings;
  log: Logger;
  now?: () => Date;
  /** More job handlers for the worker (a kind already handled is taken over by the one given here). */
  handlers?: readonly JobHandler<unknown>[];
  /** Where turns, model and tool calls, jobs and errors are counted (default: a new one, without process metrics). */
  metrics?: Metrics;
  /**
   * The inbound journal on disk (journal/file-journal.ts) and what an earlier process left in it.
   * Default: one kept in memory (an outage is waited out; a killed process loses what it held).
   */
  journal?: { backend: JournalBackend; pending: readonly StoredEntry[] };
  /** Memory providers (ground/memory-provider.ts), registered in code: no setting picks them yet. */
  providers?: readonly MemoryProvider[];
}

export { MODEL_INTERRUPTED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../ground/replies.ts";
