-- The full-text indexes hold, before the words, the column every search narrows by (btree_gin
-- lets a GIN index hold a plain text column): history's the workspace, channel knowledge's the
-- conversation (a listened channel). A search then reads from the index only the matches it may
-- use. Before, the planner ANDed each with a btree index: history's with one of the workspace's
-- rows that also holds every kept channel message (with a million kept, that bitmap outgrew
-- work_mem, went lossy, and each search rechecked tens of thousands of rows); knowledge's counts
-- scanned the whole knowledge index once per readable channel and word. bench/README.md, 2026-12-05.
CREATE EXTENSION IF NOT EXISTS btree_gin;
DROP INDEX "Message_search_chat_idx";
CREATE INDEX "Message_search_chat_idx" ON "Message" USING GIN ("workspaceId", "search") WHERE "role" <> 'channel';
DROP INDEX "Message_search_knowledge_idx";
CREATE INDEX "Message_search_knowledge_idx" ON "Message" USING GIN ("conversationId", "search") WHERE "role" = 'channel';
