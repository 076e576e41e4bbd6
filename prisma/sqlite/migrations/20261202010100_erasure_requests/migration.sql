-- CreateTable
CREATE TABLE "ErasureRequest" (
    "personId" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "requestedAt" DATETIME NOT NULL
);
