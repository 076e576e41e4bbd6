-- Search v2: text without spaces between words (Chinese, Japanese, Korean) becomes searchable.
-- Hand-edited: a generated column, so edits to text re-index (a DEFAULT would not). Each CJK
-- character is one token and everything else is dropped, so a two-character word is an indexed
-- phrase query (`部 <-> 署`), where pg_trgm would need three characters to use its index.

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "cjk" tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, regexp_replace(COALESCE(text, ''::text), '[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f]+|([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f])'::text, ' \1 '::text, 'g'::text))) STORED;

-- CreateIndex
CREATE INDEX "Message_cjk_idx" ON "Message" USING GIN ("cjk");
