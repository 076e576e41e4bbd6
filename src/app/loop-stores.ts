/**
 * The learning loop's stores, made from one database for the core (core.ts hands them to Learning):
 * where replies were made, corrections, traces, lessons, reviews, proposals, shares, disputes, what
 * memory said before, confirmations and what waits for approval. Wiring only, kept apart so the
 * core stays a page of wiring.
 */
import type { Database, Db } from "../db/client.ts";
import type { MemoryBudgets, MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import { ShareStore } from "../memory/share-store.ts";
import { VerifyStore } from "../memory/verify-store.ts";
import { ConflictStore } from "../memory/conflict-store.ts";
import { MemoryHistoryStore } from "../memory/history-store.ts";
import { SkillProposalStore } from "../skills/proposal-store.ts";
import { ApprovalStore } from "../learning/approval-store.ts";
import { CorrectionStore } from "../learning/correction-store.ts";
import { TraceStore } from "../learning/trace-store.ts";
import { ReplyPlaceStore } from "../learning/reply-place-store.ts";
import { ReviewStore } from "../learning/review-store.ts";
import { LessonStore } from "../lessons/lesson-store.ts";

export function loopStores(db: Db, database: Pick<Database, "provider" | "direct">, o: { memory: MemoryStore; skills: SkillStore; budgets: MemoryBudgets; now: () => Date; correctionWindowMs: number }) {
  return {
    places: new ReplyPlaceStore(db),
    corrections: new CorrectionStore(db, o.now, o.correctionWindowMs),
    traces: new TraceStore(db, database),
    lessons: new LessonStore(db, o.memory),
    reviews: new ReviewStore(db, database),
    skillProposals: new SkillProposalStore(db, [o.skills]),
    shares: new ShareStore(db, o.memory, o.budgets),
    conflicts: new ConflictStore(db, o.memory),
    memoryHistory: new MemoryHistoryStore(db),
    verified: new VerifyStore(db, [o.skills, o.memory]),
    approvals: new ApprovalStore(db),
  };
}
