-- Memory that stays true (src/memory/validity.ts): every entry has an interval of validity, a
-- replaced text is kept as a superseded row, contradicting entries wait for a person, and shared
-- items carry the date someone last confirmed them. Columns added only: existing entries keep
-- their text and status, and count as valid since they were created.
-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN "validFrom" DATETIME;
ALTER TABLE "MemoryEntry" ADD COLUMN "validUntil" DATETIME;
ALTER TABLE "MemoryEntry" ADD COLUMN "supersededById" TEXT;
ALTER TABLE "MemoryEntry" ADD COLUMN "verifiedAt" DATETIME;
ALTER TABLE "MemoryEntry" ADD COLUMN "verifiedById" TEXT;
ALTER TABLE "MemoryEntry" ADD COLUMN "conflictWithId" TEXT;
ALTER TABLE "MemoryEntry" ADD COLUMN "conflictPostId" INTEGER;
ALTER TABLE "MemoryEntry" ADD COLUMN "remindedAt" DATETIME;
ALTER TABLE "Skill" ADD COLUMN "verifiedAt" DATETIME;
ALTER TABLE "Skill" ADD COLUMN "verifiedById" TEXT;
ALTER TABLE "SkillProposal" ADD COLUMN "remindedAt" DATETIME;

-- CreateIndex
CREATE INDEX "MemoryEntry_supersededById_idx" ON "MemoryEntry"("supersededById");
