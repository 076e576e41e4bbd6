-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN     "origin" TEXT,
ADD COLUMN     "proposalMessageId" INTEGER,
ADD COLUMN     "quote" TEXT,
ADD COLUMN     "replacesId" TEXT;

-- AlterTable
ALTER TABLE "Skill" ADD COLUMN     "successCount" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "ReplyTrace" (
    "messageId" INTEGER NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "toolCalls" INTEGER NOT NULL DEFAULT 0,
    "skills" TEXT NOT NULL DEFAULT '[]',
    "lessons" TEXT NOT NULL DEFAULT '[]',
    "positive" INTEGER NOT NULL DEFAULT 0,
    "negative" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReplyTrace_pkey" PRIMARY KEY ("messageId")
);

-- CreateTable
CREATE TABLE "Correction" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "replyMessageId" INTEGER NOT NULL,
    "reactorId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'asked',
    "questionMessageId" INTEGER,
    "correctionMessageId" INTEGER,
    "lessonId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Correction_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ReplyTrace_workspaceId_createdAt_idx" ON "ReplyTrace"("workspaceId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Correction_replyMessageId_key" ON "Correction"("replyMessageId");

-- CreateIndex
CREATE INDEX "Correction_conversationId_reactorId_status_idx" ON "Correction"("conversationId", "reactorId", "status");

-- CreateIndex
CREATE INDEX "Correction_workspaceId_createdAt_idx" ON "Correction"("workspaceId", "createdAt");

