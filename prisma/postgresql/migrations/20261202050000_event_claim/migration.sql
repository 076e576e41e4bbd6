-- Platform events one process took (src/core/claims.ts): Discord delivers every event to every
-- replica's gateway session, and the replica that claims one first is the one that acts on it.
-- CreateTable
CREATE TABLE "EventClaim" (
    "key" TEXT NOT NULL,
    "claimedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EventClaim_pkey" PRIMARY KEY ("key")
);
-- CreateIndex
CREATE INDEX "EventClaim_claimedAt_idx" ON "EventClaim"("claimedAt");
