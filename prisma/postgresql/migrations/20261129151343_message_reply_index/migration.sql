-- CreateIndex
CREATE INDEX "Message_replyToId_idx" ON "Message"("replyToId");
