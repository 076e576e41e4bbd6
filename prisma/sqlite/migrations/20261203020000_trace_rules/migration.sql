-- The team rules each reply had in its prompt (src/learning/trace-store.ts): a rule in front of
-- answers that were corrected is marked doubtful, and the weekly report counts corrections by rule.
-- AlterTable
ALTER TABLE "ReplyTrace" ADD COLUMN "rules" TEXT NOT NULL DEFAULT '[]';
