-- Channel knowledge (src/knowledge/): listened channels, their members, people who opted out;
-- a listened channel's messages are kept in a conversation of kind "channel", each with its link.
-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'chat';
-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "link" TEXT;
-- CreateTable
CREATE TABLE "ChannelListen" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'on',
    "enabledById" TEXT,
    "enabledAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "announcedAt" TIMESTAMP(3),
    "backfill" TEXT NOT NULL DEFAULT 'idle',
    "cursor" TEXT,
    "backfilled" INTEGER NOT NULL DEFAULT 0,
    "reachedAt" TIMESTAMP(3),
    "requestedBy" TEXT,
    "membersAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "ChannelListen_pkey" PRIMARY KEY ("id")
);
-- CreateTable
CREATE TABLE "ChannelMember" (
    "workspaceId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    CONSTRAINT "ChannelMember_pkey" PRIMARY KEY ("workspaceId","channelId","userId")
);
-- CreateTable
CREATE TABLE "ListenExclusion" (
    "workspaceId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ListenExclusion_pkey" PRIMARY KEY ("workspaceId","userId")
);
-- CreateIndex
CREATE UNIQUE INDEX "ChannelListen_workspaceId_channelId_key" ON "ChannelListen"("workspaceId", "channelId");
-- CreateIndex
CREATE INDEX "ChannelMember_workspaceId_userId_idx" ON "ChannelMember"("workspaceId", "userId");

-- Channel knowledge has full-text indexes of its own (partial GIN indexes): history searches never
-- walk a listened channel's messages, however many are kept; the knowledge index is searched only
-- for people who can read some listened channel (src/history/search-postgres.ts).
DROP INDEX "Message_search_idx";
CREATE INDEX "Message_search_chat_idx" ON "Message" USING GIN ("search") WHERE "role" <> 'channel';
CREATE INDEX "Message_search_knowledge_idx" ON "Message" USING GIN ("search") WHERE "role" = 'channel';

-- The ranking's workspace figures count history only, read through this index.
CREATE INDEX "Message_workspaceId_role_idx" ON "Message"("workspaceId", "role");
