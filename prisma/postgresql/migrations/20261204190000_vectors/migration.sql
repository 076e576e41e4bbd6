-- Embeddings beside their rows (issue 30): int8 vectors per message and per memory entry, by vector space.
-- CreateTable
CREATE TABLE "MessageVector" (
    "messageId" INTEGER NOT NULL,
    "space" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "vector" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MessageVector_pkey" PRIMARY KEY ("messageId","space")
);

-- CreateTable
CREATE TABLE "EntryVector" (
    "entryId" TEXT NOT NULL,
    "space" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "textHash" TEXT NOT NULL,
    "vector" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EntryVector_pkey" PRIMARY KEY ("entryId","space")
);

-- CreateIndex
CREATE INDEX "MessageVector_space_workspaceId_idx" ON "MessageVector"("space", "workspaceId");

-- CreateIndex
CREATE INDEX "EntryVector_space_workspaceId_idx" ON "EntryVector"("space", "workspaceId");

-- AddForeignKey
ALTER TABLE "MessageVector" ADD CONSTRAINT "MessageVector_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EntryVector" ADD CONSTRAINT "EntryVector_entryId_fkey" FOREIGN KEY ("entryId") REFERENCES "MemoryEntry"("id") ON DELETE CASCADE ON UPDATE CASCADE;
