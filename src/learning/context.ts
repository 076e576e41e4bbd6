/**
 * What the learning loop's jobs need from the core: its stores, the model, and its post operation.
 * Every read and write of the loop goes through the stores here.
 */
import type { JobQueue } from "../jobs/job-store.ts";
import type { ModelClient } from "../agent/model.ts";
import type { MemoryBudgets, MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { HistoryStore } from "../history/store/store.ts";
import type { Posted, PostTarget, RichPost } from "../ground/adapter.ts";
import type { Platform } from "../ground/types.ts";
import type { AccessPolicy } from "../admission/access.ts";
import type { Logger } from "../ground/log.ts";
import type { LearningSettings } from "./settings.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { CorrectionStore } from "./correction-store.ts";
import type { TraceStore } from "./trace-store.ts";
import type { ReplyPlaceStore } from "./reply-place-store.ts";
import type { LessonStore } from "../lessons/lesson-store.ts";
import type { ReviewStore } from "./review-store.ts";
import type { SkillProposalStore } from "../skills/proposal-store.ts";
import type { ShareStore } from "../memory/share-store.ts";
import type { ApprovalStore } from "./approval-store.ts";
import type { VerifyStore } from "../memory/verify-store.ts";
import type { Tool } from "../tools/registry.ts";
import type { EmojiReader, EmojiSignals } from "./emoji.ts";
import type { WriteScreen } from "../safety/screen.ts";
import type { ConflictStore } from "../memory/conflict-store.ts";
import type { MemoryHistoryStore } from "../memory/history-store.ts";

export interface LearningDeps {
  /**
   * Still read by the curator, the report, the views and other commands through this context; no
   * module of learning/, lessons/ or memory/ uses it. Goes once those read through their stores.
   */
  jobs: JobQueue;
  model: ModelClient;
  memory: MemoryStore;
  skills: SkillStore;
  history: HistoryStore;
  /** Where replies were made: their conversations, messages, people and sessions. */
  places: ReplyPlaceStore;
  corrections: CorrectionStore;
  traces: TraceStore;
  lessons: LessonStore;
  /** Where each conversation's reviews read through, and which conversations went quiet. */
  reviews: ReviewStore;
  /** A review's changes to team skills, waiting for a teammate (skill-proposals.ts). */
  skillProposals: SkillProposalStore;
  /** Entries asked for the team and kept where they were said, waiting for a teammate (shares.ts). */
  shares: ShareStore;
  /** Entries in force that contradict each other, and how a pair is settled (contradictions.ts). */
  conflicts: ConflictStore;
  /** What memory said before: superseded texts (memory/history-store.ts). */
  memoryHistory: MemoryHistoryStore;
  /** Everything waiting for a person, with its age: reminders, the admins' digest, the report (approval-store.ts). */
  approvals: ApprovalStore;
  /** When people last confirmed shared items still hold (issue 27): ✅ on an answer confirms what it drew on. */
  verified: VerifyStore;
  /** The turn's tools, in order: a review sends the same list (its cache prefix is the turns'), refusing all but memory and skills. */
  turnTools: readonly Tool[];
  /** The model-judged screen a review's shared memory writes pass, as a turn's do (safety/screen.ts). */
  screen?: WriteScreen;
  /** The core's post operation (adapter contract): stored, chunked (or in `rich` form), recorded as deliveries. */
  post(platform: Platform, target: PostTarget, markdown: string, rich?: RichPost): Promise<Posted>;
  settings: { model: string; summaryModel: string; maxTokens: number; budgets: MemoryBudgets; access: AccessPolicy; learning: LearningSettings };
  log: Logger;
  now: () => Date;
  /** Where the jobs, their model calls and their tool calls are counted. */
  metrics: Metrics;
  /**
   * Reads an emoji written with a platform's names (the emoji settings; a feedback job queued before
   * adapters sent characters) as its character: the adapters' knowledge, handed in by the top.
   */
  readEmoji: EmojiReader;
}

export interface LearningContext extends LearningDeps {
  signals: EmojiSignals;
  /** The model reviews and lessons are written with. */
  reviewModel: string;
}
