-- A person's message is marked answered (or failed) by the same statement that stores cairn's reply
-- to it: one write per turn instead of two, and no crash can leave a reply whose message still
-- reads as unanswered. Context rows also point at a message (replyToId) and are left out.
CREATE FUNCTION "message_outcome"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "Message" SET "status" = CASE NEW."status" WHEN 'failed' THEN 'failed' ELSE 'answered' END WHERE "id" = NEW."replyToId";
    RETURN NULL;
END
$$;

CREATE TRIGGER "message_outcome_ai" AFTER INSERT ON "Message" FOR EACH ROW
    WHEN (NEW."role" = 'assistant' AND NEW."replyToId" IS NOT NULL)
    EXECUTE FUNCTION "message_outcome"();
