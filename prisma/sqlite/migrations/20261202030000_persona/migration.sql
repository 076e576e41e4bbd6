-- A workspace's team persona and standing instructions (src/persona/store.ts).
-- CreateTable
CREATE TABLE "Persona" (
    "workspaceId" TEXT NOT NULL PRIMARY KEY,
    "text" TEXT NOT NULL,
    "updatedById" TEXT,
    "scannedWith" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
