-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN "flag" TEXT;

-- AlterTable
ALTER TABLE "Revision" ADD COLUMN "runId" TEXT;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN "finishedAt" DATETIME;
ALTER TABLE "Job" ADD COLUMN "result" TEXT;
ALTER TABLE "Job" ADD COLUMN "startedAt" DATETIME;

-- CreateTable
CREATE TABLE "Report" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "slot" TEXT NOT NULL,
    "periodStart" DATETIME NOT NULL,
    "periodEnd" DATETIME NOT NULL,
    "data" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "Report_workspaceId_createdAt_idx" ON "Report"("workspaceId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Report_workspaceId_slot_key" ON "Report"("workspaceId", "slot");

-- CreateIndex
CREATE INDEX "Revision_runId_idx" ON "Revision"("runId");

-- CreateIndex
CREATE INDEX "Job_kind_status_idx" ON "Job"("kind", "status");

