-- A conversation's messages under a lease (src/turn/lease-store.ts): the look at turns ahead of a
-- turn, which every turn under a lease makes, and the look for a conversation's expired leases.
-- Before, they read every leased message of every conversation (Message_leaseOwner_idx), or every
-- message of the workspace when PostgreSQL had no statistics to plan by: in a burst, hundreds per turn.
-- Partial, as the other lease indexes: only messages whose turn is under way have an entry.
-- Written by hand: Prisma cannot declare a partial index (prisma/models.prisma says so).
CREATE INDEX "Message_leaseConversation_idx" ON "Message"("conversationId") WHERE "leaseOwner" IS NOT NULL;
