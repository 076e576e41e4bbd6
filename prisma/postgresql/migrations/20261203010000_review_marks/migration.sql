-- Where each conversation's latest memory and skill reviews read through (src/learning/review-triggers.ts):
-- a review is due on what was said since, and the conditional update that moves a mark is what
-- queues a review once across replicas. Quiet conversations are found by kind and last message.
-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "reviewedMemoryThrough" INTEGER,
ADD COLUMN     "reviewedSkillsThrough" INTEGER;

-- CreateIndex
CREATE INDEX "Conversation_kind_lastMessageAt_idx" ON "Conversation"("kind", "lastMessageAt");
