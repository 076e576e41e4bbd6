-- Search v2: text without spaces between words (Chinese, Japanese, Korean) becomes searchable.
-- An FTS5 trigram index over the messages that contain CJK characters (the GLOB below is the
-- same character class as src/history/text.ts), for substring lookups of three or more characters.
-- Shorter CJK words are matched with LIKE by the search itself. Latin text stays in message_fts.

CREATE VIRTUAL TABLE "message_trgm" USING fts5(
    text,
    content = 'Message',
    content_rowid = 'id',
    tokenize = 'trigram'
);

INSERT INTO "message_trgm"(rowid, text) SELECT "id", "text" FROM "Message" WHERE "text" GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿가-힯ㇰ-ㇿｦ-ﾟ]*';

CREATE TRIGGER "message_trgm_ai" AFTER INSERT ON "Message" WHEN new."text" GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿가-힯ㇰ-ㇿｦ-ﾟ]*' BEGIN
    INSERT INTO "message_trgm"(rowid, text) VALUES (new."id", new."text");
END;

CREATE TRIGGER "message_trgm_ad" AFTER DELETE ON "Message" WHEN old."text" GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿가-힯ㇰ-ㇿｦ-ﾟ]*' BEGIN
    INSERT INTO "message_trgm"("message_trgm", rowid, text) VALUES ('delete', old."id", old."text");
END;

CREATE TRIGGER "message_trgm_au" AFTER UPDATE OF "text" ON "Message" BEGIN
    INSERT INTO "message_trgm"("message_trgm", rowid, text) SELECT 'delete', old."id", old."text" WHERE old."text" GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿가-힯ㇰ-ㇿｦ-ﾟ]*';
    INSERT INTO "message_trgm"(rowid, text) SELECT new."id", new."text" WHERE new."text" GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿가-힯ㇰ-ㇿｦ-ﾟ]*';
END;
