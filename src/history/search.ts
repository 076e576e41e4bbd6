/**
 * Full-text search over stored messages: FTS5 on SQLite, a generated tsvector with GIN on PostgreSQL.
 *
 * Invariant: results come only from conversations the asker may see, enforced in the WHERE clause:
 * the asker's workspace, and among its DMs only the asker's own.
 */
import type { Database } from "../db/client.ts";
import type { Scope } from "../core/types.ts";

export interface SearchHit {
  messageId: number;
  conversationId: string;
  conversationKey: string;
  isDm: boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  author: string | null;
  createdAt: Date;
  snippet: string;
}

export interface SearchOptions {
  limit: number;
  /** Messages of this session are already in the prompt: leave them out. */
  excludeSessionId?: string | null;
}

// Words too common to help ranking; kept short on purpose (the FTS engines stem the rest).
const STOP = new Set(
  "a an and are as at be but by did do does for from had has have he her his how i if in is it its me my of on or our she so that the their them they this to was we were what when where which who why will with you your".split(
    " ",
  ),
);

/** The query's searchable words: letters and digits only, so no FTS syntax can be injected. */
export function searchTerms(query: string): string[] {
  const words = query.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = words.filter((w) => !STOP.has(w));
  return [...new Set(kept.length > 0 ? kept : words)].slice(0, 32);
}

interface Row {
  id: number | bigint;
  conversationId: string;
  key: string;
  isDm: number | boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  author: string | null;
  createdAt: Date | string;
  snippet: string;
}

export async function searchMessages(db: Database, scope: Scope, query: string, opts: SearchOptions): Promise<SearchHit[]> {
  const terms = searchTerms(query);
  if (terms.length === 0) return [];
  const exclude = opts.excludeSessionId ?? "";
  let rows: Row[];
  if (db.provider === "sqlite") {
    const match = terms.map((t) => `"${t}"`).join(" OR ");
    rows = await db.prisma.$queryRawUnsafe<Row[]>(
      `SELECT m.id, m.conversationId AS conversationId, c.key, c.isDm AS isDm, c.channelId AS channelId,
              c.threadId AS threadId, m.role, p.displayName AS author, m.createdAt AS createdAt,
              snippet(message_fts, 0, '«', '»', '…', 16) AS snippet
         FROM message_fts
         JOIN "Message" m ON m.id = message_fts.rowid
         JOIN "Conversation" c ON c.id = m.conversationId
         LEFT JOIN "Person" p ON p.id = m.authorId
        WHERE message_fts MATCH ?
          AND m.workspaceId = ?
          AND (c.isDm = 0 OR c.ownerId = ?)
          AND (m.sessionId IS NULL OR m.sessionId <> ?)
          AND m.status <> 'failed'
        ORDER BY bm25(message_fts), m.id DESC
        LIMIT ?`,
      match,
      scope.workspaceId,
      scope.personId,
      exclude,
      opts.limit,
    );
  } else {
    const tsquery = terms.join(" | ");
    rows = await db.prisma.$queryRawUnsafe<Row[]>(
      `SELECT m.id, m."conversationId" AS "conversationId", c.key, c."isDm" AS "isDm", c."channelId" AS "channelId",
              c."threadId" AS "threadId", m.role, p."displayName" AS author, m."createdAt" AS "createdAt",
              ts_headline('english', m.text, q, 'StartSel=«, StopSel=», MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "') AS snippet
         FROM "Message" m
         JOIN "Conversation" c ON c.id = m."conversationId"
         LEFT JOIN "Person" p ON p.id = m."authorId"
         CROSS JOIN to_tsquery('english', $1) q
        WHERE m.search @@ q
          AND m."workspaceId" = $2
          AND (c."isDm" = false OR c."ownerId" = $3)
          AND (m."sessionId" IS NULL OR m."sessionId" <> $4)
          AND m.status <> 'failed'
        ORDER BY ts_rank_cd(m.search, q) DESC, m.id DESC
        LIMIT $5`,
      tsquery,
      scope.workspaceId,
      scope.personId,
      exclude,
      opts.limit,
    );
  }
  return rows.map((r) => ({
    messageId: Number(r.id),
    conversationId: r.conversationId,
    conversationKey: r.key,
    isDm: r.isDm === true || r.isDm === 1,
    channelId: r.channelId,
    threadId: r.threadId,
    role: r.role,
    author: r.author,
    createdAt: r.createdAt instanceof Date ? r.createdAt : new Date(r.createdAt),
    snippet: r.snippet,
  }));
}
