-- CreateTable
CREATE TABLE "ErasureRequest" (
    "personId" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "requestedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ErasureRequest_pkey" PRIMARY KEY ("personId")
);
