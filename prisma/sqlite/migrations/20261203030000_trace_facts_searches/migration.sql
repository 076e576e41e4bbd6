-- What else a reply drew on (src/learning/trace-store.ts), for "why this answer?": the memory facts
-- in its prompt and the searches it ran with the messages they returned.
-- AlterTable
ALTER TABLE "ReplyTrace" ADD COLUMN "facts" TEXT NOT NULL DEFAULT '[]';
ALTER TABLE "ReplyTrace" ADD COLUMN "searches" TEXT NOT NULL DEFAULT '[]';
