-- Turn leases (src/core/leases.ts): the process working on a person's message, or posting a reply,
-- holds a lease on its row until the reply is posted; a dead process's expired leases are taken
-- over by another process (src/core/recovery.ts).
-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "leaseOwner" TEXT,
ADD COLUMN     "leaseUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Message_leaseOwner_idx" ON "Message"("leaseOwner");

-- CreateIndex
CREATE INDEX "Message_leaseUntil_idx" ON "Message"("leaseUntil");

-- The statement that stores a reply also ends the lease on the message it answers: from then on
-- the reply's own lease (until it is posted) is what a takeover looks at.
CREATE OR REPLACE FUNCTION "message_outcome"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "Message" SET "status" = CASE NEW."status" WHEN 'failed' THEN 'failed' ELSE 'answered' END, "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = NEW."replyToId";
    RETURN NULL;
END
$$;

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
