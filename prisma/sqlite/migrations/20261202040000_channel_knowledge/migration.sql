-- Channel knowledge (src/knowledge/): listened channels, their members, people who opted out;
-- a listened channel's messages are kept in a conversation of kind "channel", each with its link.
-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'chat';
-- AlterTable
ALTER TABLE "Message" ADD COLUMN "link" TEXT;
-- CreateTable
CREATE TABLE "ChannelListen" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'on',
    "enabledById" TEXT,
    "enabledAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "announcedAt" DATETIME,
    "backfill" TEXT NOT NULL DEFAULT 'idle',
    "cursor" TEXT,
    "backfilled" INTEGER NOT NULL DEFAULT 0,
    "reachedAt" DATETIME,
    "requestedBy" TEXT,
    "membersAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);
-- CreateTable
CREATE TABLE "ChannelMember" (
    "workspaceId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    PRIMARY KEY ("workspaceId", "channelId", "userId")
);
-- CreateTable
CREATE TABLE "ListenExclusion" (
    "workspaceId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY ("workspaceId", "userId")
);
-- CreateIndex
CREATE UNIQUE INDEX "ChannelListen_workspaceId_channelId_key" ON "ChannelListen"("workspaceId", "channelId");
-- CreateIndex
CREATE INDEX "ChannelMember_workspaceId_userId_idx" ON "ChannelMember"("workspaceId", "userId");

-- Channel knowledge has a full-text index of its own: history searches (message_fts) never walk a
-- listened channel's messages, however many are kept; knowledge_fts is searched only for people
-- who can read some listened channel, and only its rows (src/history/search-sqlite.ts).
DROP TRIGGER "message_fts_ai";
DROP TRIGGER "message_fts_ad";
DROP TRIGGER "message_fts_au";

CREATE TRIGGER "message_fts_ai" AFTER INSERT ON "Message" WHEN new."role" <> 'channel' BEGIN
    INSERT INTO "message_fts"(rowid, text) VALUES (new."id", new."text");
END;

CREATE TRIGGER "message_fts_ad" AFTER DELETE ON "Message" WHEN old."role" <> 'channel' BEGIN
    INSERT INTO "message_fts"("message_fts", rowid, text) VALUES ('delete', old."id", old."text");
END;

CREATE TRIGGER "message_fts_au" AFTER UPDATE OF "text" ON "Message" WHEN new."role" <> 'channel' BEGIN
    INSERT INTO "message_fts"("message_fts", rowid, text) VALUES ('delete', old."id", old."text");
    INSERT INTO "message_fts"(rowid, text) VALUES (new."id", new."text");
END;

CREATE VIRTUAL TABLE "knowledge_fts" USING fts5(
    text,
    content = 'Message',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER "knowledge_fts_ai" AFTER INSERT ON "Message" WHEN new."role" = 'channel' BEGIN
    INSERT INTO "knowledge_fts"(rowid, text) VALUES (new."id", new."text");
END;

CREATE TRIGGER "knowledge_fts_ad" AFTER DELETE ON "Message" WHEN old."role" = 'channel' BEGIN
    INSERT INTO "knowledge_fts"("knowledge_fts", rowid, text) VALUES ('delete', old."id", old."text");
END;

CREATE TRIGGER "knowledge_fts_au" AFTER UPDATE OF "text" ON "Message" WHEN new."role" = 'channel' BEGIN
    INSERT INTO "knowledge_fts"("knowledge_fts", rowid, text) VALUES ('delete', old."id", old."text");
    INSERT INTO "knowledge_fts"(rowid, text) VALUES (new."id", new."text");
END;

-- The ranking's workspace figures count history only, read through this index.
CREATE INDEX "Message_workspaceId_role_idx" ON "Message"("workspaceId", "role");
