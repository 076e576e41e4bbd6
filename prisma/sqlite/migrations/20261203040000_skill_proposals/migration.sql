-- A review's change to a team skill, held for a teammate's approval (src/learning/skill-proposals.ts).
-- CreateTable
CREATE TABLE "SkillProposal" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "skillId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "path" TEXT,
    "oldText" TEXT,
    "newText" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "proposedById" TEXT,
    "conversationId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "decidedById" TEXT,
    "proposalMessageId" INTEGER,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SkillProposal_workspaceId_status_idx" ON "SkillProposal"("workspaceId", "status");

-- CreateIndex
CREATE INDEX "SkillProposal_proposalMessageId_idx" ON "SkillProposal"("proposalMessageId");
