-- A team skill made in a conversation reaches the workspace only with a second person
-- (src/tools/skill-reach.ts): a skill proposed for the team, and a turn's change to a team skill,
-- are SkillProposal rows a teammate approves. Columns added only: existing skills keep their scope.
-- AlterTable
ALTER TABLE "SkillProposal" ADD COLUMN "toScope" TEXT;
ALTER TABLE "SkillProposal" ADD COLUMN "sourceMessageId" INTEGER;

-- CreateIndex
CREATE INDEX "SkillProposal_workspaceId_sourceMessageId_idx" ON "SkillProposal"("workspaceId", "sourceMessageId");
