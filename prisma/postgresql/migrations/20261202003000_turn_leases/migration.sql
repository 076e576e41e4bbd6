-- Turn leases (src/core/leases.ts): the process answering a person's message holds a lease on its
-- row until the reply is posted; a dead process's expired leases are taken over by another process
-- (src/core/recovery.ts).
-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "leaseOwner" TEXT,
ADD COLUMN     "leaseUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Message_leaseOwner_idx" ON "Message"("leaseOwner");

-- CreateIndex
CREATE INDEX "Message_leaseUntil_idx" ON "Message"("leaseUntil");

-- One open session per conversation, held by the database: replicas that receive a conversation's
-- first messages at the same moment open one session between them (src/agent/sessions.ts re-reads
-- it on a unique violation). Duplicates an earlier race may have left are closed first, keeping
-- the newest open.
UPDATE "ChatSession" SET "endedAt" = "lastActivityAt", "endReason" = 'restart'
WHERE "endedAt" IS NULL AND "id" <> (
    SELECT s2."id" FROM "ChatSession" s2
    WHERE s2."conversationId" = "ChatSession"."conversationId" AND s2."endedAt" IS NULL
    ORDER BY s2."startedAt" DESC, s2."id" DESC LIMIT 1
);
CREATE UNIQUE INDEX "ChatSession_one_open_idx" ON "ChatSession"("conversationId") WHERE "endedAt" IS NULL;

-- The statement that records where a reply was posted also ends the turn's lease on the message it
-- answers: the turn is over once its answer is on the platform (one write, as for message_outcome).
CREATE FUNCTION "message_delivered"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "Message" SET "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = NEW."replyToId" AND "leaseOwner" IS NOT NULL;
    RETURN NULL;
END
$$;

CREATE TRIGGER "message_delivered_au" AFTER UPDATE OF "platformId" ON "Message" FOR EACH ROW
    WHEN (NEW."role" = 'assistant' AND NEW."replyToId" IS NOT NULL AND OLD."platformId" IS NULL AND NEW."platformId" IS NOT NULL)
    EXECUTE FUNCTION "message_delivered"();
