/**
 * The learning loop's settings (environment: CAIRN_REVIEW_*, CAIRN_CORRECTION_EMOJI, ...; see
 * .env.example), the curator's and the weekly report's included: the jobs of the loop read them,
 * so they are declared here, below the curator and the report.
 */
import type { Platform } from "../ground/types.ts";

/** The curator's thresholds (environment: CAIRN_CURATOR_*_DAYS). */
export interface CuratorSettings {
  /** An agent-made skill unused this many days is marked stale (still usable, marked in the index). */
  staleDays: number;
  /** An agent-made skill unused this many days is archived (restorable with /cairn rollback). */
  archiveDays: number;
  /** An agent-made lesson not shown with any message for this many days is archived. */
  lessonDays: number;
}

export const DEFAULT_CURATOR: CuratorSettings = { staleDays: 14, archiveDays: 30, lessonDays: 60 };

/** Memory that stays true (environment: CAIRN_VERIFY_DAYS, CAIRN_DECAY_DAYS, CAIRN_APPROVAL_REMIND_HOURS). */
export interface FreshnessSettings {
  /** A shared item nobody confirmed for this many days shows its date and is listed for review. */
  verifyDays: number;
  /** A lesson or rule of low confidence unused this many days is proposed for archiving (never archived silently). */
  decayDays: number;
  /** A proposal waiting this many hours is reminded once in its thread and listed to admins. */
  remindHours: number;
}

export const DEFAULT_FRESHNESS: FreshnessSettings = { verifyDays: 90, decayDays: 180, remindHours: 24 };

/** Where the weekly report is posted (CAIRN_REPORT_CHANNEL, parsed in report/channel.ts). */
export interface ReportChannel {
  platform: Platform;
  channel: string;
}

export type ReviewNotice = "off" | "brief" | "verbose";

export interface LearningSettings {
  /** A memory review after every N person messages of a conversation (since its last); 0 turns it off. */
  reviewEveryTurns: number;
  /** A skill review once the turns since the last one made this many tool calls in all; 0 turns it off. */
  skillReviewToolCalls: number;
  /** A memory review when a conversation ends (`/new`, idle) with at least this many person messages since the last; 0 turns it off. */
  reviewMinTurns: number;
  /** A conversation quiet this long has ended, for its review (the session's own idle timeout ends it too). */
  reviewIdleMs: number;
  /** The review's and the distiller's model; null = the main model (the one the conversation's prompt was written for). */
  reviewModel: string | null;
  /** What the person is told in the thread after a review wrote something. */
  reviewNotice: ReviewNotice;
  /** Memory and skill writes one review may make; later ones are refused with a note to the model. */
  reviewMaxWrites: number;
  /** Reactions that mean "this was wrong" (unicode or Slack names; aliases are added, see emoji.ts). */
  correctionEmoji: readonly string[];
  /** Reactions that mean "this was right". */
  positiveEmoji: readonly string[];
  /** ✅ from this many people (other than the corrector; an admin counts as all) make a team rule. */
  ruleApprovals: number;
  /** How long the question after a 👎 waits for the reactor's correction. */
  correctionWindowMs: number;
  /** The job worker: how often it looks for due jobs, its lease, and jobs run at once. */
  worker: { pollMs: number; leaseMs: number; concurrency: number; backoffMs: number };
  /** Where the weekly report is posted (CAIRN_REPORT_CHANNEL); null: reports are stored only. */
  reportChannel: ReportChannel | null;
  /** The curator's thresholds (src/curator). */
  curator: CuratorSettings;
  /** Verification dates, decay and approval reminders (issue 27). */
  freshness: FreshnessSettings;
  /**
   * Whether an entry coming into force is checked for contradictions (learning/contradictions.ts),
   * one summary-model call each. CAIRN_CONTRADICTIONS: on unless "off"; a core built without
   * settings (tests of other things) leaves it off, as it does the safety screen.
   */
  contradictions: boolean;
  /** The weekly report's model prices, USD per million tokens, over report/prices.ts (CAIRN_MODEL_PRICES). */
  modelPrices: Readonly<Record<string, { input: number; output: number; cacheRead?: number | undefined; cacheWrite?: number | undefined }>>;
}

export const DEFAULT_LEARNING: LearningSettings = {
  reviewEveryTurns: 10,
  skillReviewToolCalls: 10,
  reviewMinTurns: 3,
  reviewIdleMs: 30 * 60 * 1000,
  reviewModel: null,
  reviewNotice: "brief",
  reviewMaxWrites: 3,
  correctionEmoji: ["👎", "❌"],
  positiveEmoji: ["👍", "✅", "⭐", "🎉"],
  ruleApprovals: 1,
  correctionWindowMs: 24 * 60 * 60 * 1000,
  worker: { pollMs: 1_000, leaseMs: 60_000, concurrency: 2, backoffMs: 30_000 },
  reportChannel: null,
  curator: DEFAULT_CURATOR,
  freshness: DEFAULT_FRESHNESS,
  contradictions: false,
  modelPrices: {},
};
