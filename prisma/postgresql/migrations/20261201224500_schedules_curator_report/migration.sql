-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN     "flag" TEXT;

-- AlterTable
ALTER TABLE "Revision" ADD COLUMN     "runId" TEXT;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "finishedAt" TIMESTAMP(3),
ADD COLUMN     "result" TEXT,
ADD COLUMN     "startedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "Report" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "slot" TEXT NOT NULL,
    "periodStart" TIMESTAMP(3) NOT NULL,
    "periodEnd" TIMESTAMP(3) NOT NULL,
    "data" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Report_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Report_workspaceId_createdAt_idx" ON "Report"("workspaceId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Report_workspaceId_slot_key" ON "Report"("workspaceId", "slot");

-- CreateIndex
CREATE INDEX "Revision_runId_idx" ON "Revision"("runId");

-- CreateIndex
CREATE INDEX "Job_kind_status_idx" ON "Job"("kind", "status");

