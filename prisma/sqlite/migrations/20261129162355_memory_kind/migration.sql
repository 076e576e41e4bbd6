-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'fact';
