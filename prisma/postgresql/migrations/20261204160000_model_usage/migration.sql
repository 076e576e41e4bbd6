-- Model usage by workspace, hour, model and purpose: the weekly report's tokens, cost and failures.
-- CreateTable
CREATE TABLE "ModelUsage" (
    "workspaceId" TEXT NOT NULL,
    "hour" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheReadTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheWriteTokens" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelUsage_pkey" PRIMARY KEY ("workspaceId","hour","model","purpose")
);

-- CreateIndex
CREATE INDEX "ModelUsage_workspaceId_hour_idx" ON "ModelUsage"("workspaceId", "hour");
