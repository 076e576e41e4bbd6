-- What was forgotten at a person's request, never its text (src/erasure/tombstone-store.ts).
-- CreateTable
CREATE TABLE "Tombstone" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "personId" TEXT,
    "channelKey" TEXT,
    "contentHash" TEXT,
    "forgottenById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Tombstone_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Tombstone_workspaceId_kind_contentHash_idx" ON "Tombstone"("workspaceId", "kind", "contentHash");

-- CreateIndex
CREATE INDEX "Tombstone_workspaceId_kind_personId_idx" ON "Tombstone"("workspaceId", "kind", "personId");

-- CreateIndex
CREATE INDEX "Tombstone_workspaceId_kind_channelKey_idx" ON "Tombstone"("workspaceId", "kind", "channelKey");
