-- The rate limit admits a person's message under a lock per person (src/admission/rate-limit.ts),
-- counting the messages admitted before it; replicas checking one person's messages at once no
-- longer each miss the other's. Messages already in flight or answered were admitted.
-- AlterTable
ALTER TABLE "Message" ADD COLUMN "admitted" BOOLEAN NOT NULL DEFAULT false;

UPDATE "Message" SET "admitted" = true WHERE "role" = 'user' AND "status" <> 'failed';
