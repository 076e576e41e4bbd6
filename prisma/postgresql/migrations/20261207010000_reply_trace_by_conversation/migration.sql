-- A conversation's reply traces in reply order. The tool calls of the turns since a conversation's
-- skill review are summed after every reply is posted (src/learning/review-store.ts,
-- `afterDelivered`); without this index the sum read the traces of every conversation in the id
-- range, all of them for a conversation never reviewed (bench/README.md, "2026-12-06 (late)").
CREATE INDEX "ReplyTrace_conversationId_messageId_idx" ON "ReplyTrace"("conversationId", "messageId");
