-- History's full-text index (message_fts) is written in batches, not by a trigger on every
-- insert (src/history/store/search-index-sqlite.ts). FTS5 writes a segment at the end of every
-- transaction that touched it, and merges segments as they pile up: a turn's two messages, each
-- stored alone, paid both. Rows with ids up to "through" are indexed; the rest are indexed
-- together before any search reads the index, and soon after they are stored.
CREATE TABLE "HistoryIndexed" (
    "id" INTEGER NOT NULL PRIMARY KEY CHECK ("id" = 1),
    "through" INTEGER NOT NULL
);
-- Every message stored so far was indexed by the insert trigger dropped below.
INSERT INTO "HistoryIndexed" ("id", "through") SELECT 1, COALESCE(MAX("id"), 0) FROM "Message";

DROP TRIGGER "message_fts_ai";
DROP TRIGGER "message_fts_ad";
DROP TRIGGER "message_fts_au";

-- A row not indexed yet has nothing in the index to remove: its current text is indexed when its
-- turn comes (a deletion before then leaves nothing to index).
CREATE TRIGGER "message_fts_ad" AFTER DELETE ON "Message"
WHEN old."role" <> 'channel' AND old."id" <= (SELECT "through" FROM "HistoryIndexed") BEGIN
    INSERT INTO "message_fts"("message_fts", rowid, text) VALUES ('delete', old."id", old."text");
END;

CREATE TRIGGER "message_fts_au" AFTER UPDATE OF "text" ON "Message"
WHEN new."role" <> 'channel' AND old."id" <= (SELECT "through" FROM "HistoryIndexed") BEGIN
    INSERT INTO "message_fts"("message_fts", rowid, text) VALUES ('delete', old."id", old."text");
    INSERT INTO "message_fts"(rowid, text) VALUES (new."id", new."text");
END;
