-- A workspace's team persona and standing instructions (src/persona/store.ts).
-- CreateTable
CREATE TABLE "Persona" (
    "workspaceId" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "updatedById" TEXT,
    "scannedWith" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Persona_pkey" PRIMARY KEY ("workspaceId")
);
