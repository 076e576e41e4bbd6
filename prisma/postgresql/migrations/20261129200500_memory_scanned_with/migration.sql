-- AlterTable
ALTER TABLE "MemoryEntry" ADD COLUMN     "scannedWith" TEXT;
