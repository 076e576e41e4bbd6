-- Memory that stays true (src/memory/validity.ts): every entry has an interval of validity, a
-- replaced text is kept as a superseded row, contradicting entries wait for a person, and shared
-- items carry the date someone last confirmed them. Columns added only: existing entries keep
-- their text and status, and count as valid since they were created.
-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN     "validFrom" TIMESTAMP(3),
ADD COLUMN     "validUntil" TIMESTAMP(3),
ADD COLUMN     "supersededById" TEXT,
ADD COLUMN     "verifiedAt" TIMESTAMP(3),
ADD COLUMN     "verifiedById" TEXT,
ADD COLUMN     "conflictWithId" TEXT,
ADD COLUMN     "conflictPostId" INTEGER,
ADD COLUMN     "remindedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Skill" ADD COLUMN     "verifiedAt" TIMESTAMP(3),
ADD COLUMN     "verifiedById" TEXT;

-- AlterTable
ALTER TABLE "SkillProposal" ADD COLUMN     "remindedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "MemoryEntry_supersededById_idx" ON "MemoryEntry"("supersededById");
