/**
 * What narrows a read of history (session_search's after, before, author and channel), in every
 * form a store needs it: as SQL on a message `m` for the statements that find search candidates
 * (search-sqlite.ts, search-postgres.ts, search-vectors.ts), and as a check on one message for what
 * ranking adds beside them (a neighbour lending score). browse.ts writes the same rules for Prisma.
 *
 * Filters only narrow: the asker's scope is every statement's own WHERE clause.
 */
import { sqlTime, type SqlParam } from "../../db/direct.ts";
import type { Provider } from "../../db/migrate.ts";
import type { Scope } from "../../ground/types.ts";

/** What narrows a read (all optional): a time span, authors (ids from `authorsNamed`), a channel. */
export interface HistoryFilter {
  /** On or after. */
  after?: Date;
  /** Strictly before. */
  before?: Date;
  authorIds?: readonly string[];
  /** A conversation's platform channel id, or "dm": the asker's own DM with cairn. */
  channel?: string;
  /**
   * The channel's conversations the asker may read (`channelConversations`), when resolved: read by
   * their ids (up to CHANNEL_CONVERSATIONS of them), where the channel's id alone made PostgreSQL
   * walk the workspace's messages newest first looking for a channel that has few.
   */
  conversationIds?: readonly string[];
}

/** A channel's conversations read by id in a filter; a channel with more threads is read by its id. */
export const CHANNEL_CONVERSATIONS = 500;

/** Whether the filter narrows anything. */
export const isFiltered = (f: HistoryFilter): boolean => f.after !== undefined || f.before !== undefined || f.authorIds !== undefined || f.channel !== undefined;

/** Whether the channel is read by its conversations' ids (else by the channel's id, or as the asker's DM). */
export const byConversationIds = (f: HistoryFilter): f is HistoryFilter & { conversationIds: readonly string[] } =>
  f.conversationIds !== undefined && f.conversationIds.length <= CHANNEL_CONVERSATIONS;

/** SQL to append to a WHERE clause (" AND ..." each, "" for no filter) and its parameters, in order. */
export interface FilterSql {
  sql: string;
  params: SqlParam[];
}

/**
 * The filter on message `m`. PostgreSQL's placeholders are numbered from `from` (the statement's
 * parameters before these); SQLite's `?` take the params where the clause stands. A list is one
 * parameter (a JSON array on SQLite, an array on PostgreSQL): the statement's text stays the same
 * whatever its length, and so does its prepared plan.
 */
export function filterSql(provider: Provider, f: HistoryFilter, scope: Scope, from = 1): FilterSql {
  const params: SqlParam[] = [];
  const p = (v: SqlParam): string => {
    params.push(v);
    return provider === "sqlite" ? "?" : `$${from + params.length - 1}`;
  };
  const among = (ids: readonly string[]): string =>
    provider === "sqlite" ? `IN (SELECT value FROM json_each(${p(JSON.stringify(ids))}))` : `= ANY(${p([...ids])}::text[])`;
  const parts: string[] = [];
  if (f.after) parts.push(`m."createdAt" >= ${p(sqlTime(provider, f.after))}`);
  if (f.before) parts.push(`m."createdAt" < ${p(sqlTime(provider, f.before))}`);
  if (f.authorIds) parts.push(`m."authorId" ${among(f.authorIds)}`);
  if (f.channel === "dm") {
    parts.push(`m."conversationId" IN (SELECT d.id FROM "Conversation" d WHERE d."workspaceId" = ${p(scope.workspaceId)} AND d."isDm" AND d."ownerId" = ${p(scope.personId)})`);
  } else if (byConversationIds(f)) {
    parts.push(`m."conversationId" ${among(f.conversationIds)}`);
  } else if (f.channel !== undefined) {
    parts.push(`m."conversationId" IN (SELECT d.id FROM "Conversation" d WHERE d."workspaceId" = ${p(scope.workspaceId)} AND d."channelId" = ${p(f.channel)})`);
  }
  return { sql: parts.map((s) => ` AND ${s}`).join(""), params };
}

/**
 * Whether one message passes the filter, as `filterSql` decides it: `conversation` is its own, as
 * the search shows it (a DM the asker sees is theirs: the scope lets no other through).
 */
export function passes(f: HistoryFilter, m: { createdAt: Date; authorId: string | null; conversationId: string }, conversation: { isDm: boolean; channelId: string }): boolean {
  if (f.after && m.createdAt < f.after) return false;
  if (f.before && m.createdAt >= f.before) return false;
  if (f.authorIds && (m.authorId === null || !f.authorIds.includes(m.authorId))) return false;
  if (f.channel === "dm") return conversation.isDm;
  if (byConversationIds(f)) return f.conversationIds.includes(m.conversationId);
  return f.channel === undefined || conversation.channelId === f.channel;
}
