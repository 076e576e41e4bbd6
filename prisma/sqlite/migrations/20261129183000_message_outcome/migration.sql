-- A person's message is marked answered (or failed) by the same statement that stores cairn's reply
-- to it: one write per turn instead of two, and no crash can leave a reply whose message still
-- reads as unanswered. Context rows also point at a message (replyToId) and are left out.
CREATE TRIGGER "message_outcome_ai" AFTER INSERT ON "Message" WHEN new."role" = 'assistant' AND new."replyToId" IS NOT NULL BEGIN
    UPDATE "Message" SET "status" = CASE new."status" WHEN 'failed' THEN 'failed' ELSE 'answered' END WHERE "id" = new."replyToId";
END;
