-- A write's reach without a second person is the place it was said (src/memory/share-store.ts): an
-- entry asked for the team is kept there and proposed; trusted teachers' writes reach the workspace
-- at once (src/admission/trust.ts). Columns and a table added only: existing entries keep their scope.
-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN     "proposedScope" TEXT;

-- CreateTable
CREATE TABLE "Teacher" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "addedById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Teacher_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Teacher_workspaceId_userId_key" ON "Teacher"("workspaceId", "userId");
