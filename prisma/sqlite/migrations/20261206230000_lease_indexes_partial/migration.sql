-- The lease indexes hold only messages under a lease (a person's message whose turn is under way,
-- src/turn/leases.ts): every statement that reads them names a lease (leaseOwner = a process,
-- leaseUntil <= a time, or IS NOT NULL), and a message holds one only until its answer is posted.
-- Before, every message had an entry in both, replies and kept channel messages included, which
-- never hold a lease: two index writes per insert, and two indexes as long as the table.
-- Written by hand: Prisma cannot declare a partial index (prisma/models.prisma says so).
DROP INDEX "Message_leaseOwner_idx";
CREATE INDEX "Message_leaseOwner_idx" ON "Message"("leaseOwner") WHERE "leaseOwner" IS NOT NULL;
DROP INDEX "Message_leaseUntil_idx";
CREATE INDEX "Message_leaseUntil_idx" ON "Message"("leaseUntil") WHERE "leaseUntil" IS NOT NULL;
