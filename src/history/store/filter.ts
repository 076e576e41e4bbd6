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

/** Placeholders as a dialect writes them, numbered from `from` on PostgreSQL, and lists as one parameter. */
function writer(provider: Provider, from: number) {
  const params: SqlParam[] = [];
  const p = (v: SqlParam): string => {
    params.push(v);
    return provider === "sqlite" ? "?" : `$${from + params.length - 1}`;
  };
  const among = (ids: readonly string[]): string =>
    provider === "sqlite" ? `IN (SELECT value FROM json_each(${p(JSON.stringify(ids))}))` : `= ANY(${p([...ids])}::text[])`;
  const done = (parts: string[]): FilterSql => ({ sql: parts.map((s) => ` AND ${s}`).join(""), params });
  return { p, among, done };
}

/** The channel part of the filter, on a conversation id `column`. */
function channelPart(f: HistoryFilter, scope: Scope, column: string, w: ReturnType<typeof writer>): string[] {
  const { p, among } = w;
  if (f.channel === "dm") return [`${column} IN (SELECT d.id FROM "Conversation" d WHERE d."workspaceId" = ${p(scope.workspaceId)} AND d."isDm" AND d."ownerId" = ${p(scope.personId)})`];
  if (byConversationIds(f)) return [`${column} ${among(f.conversationIds)}`];
  if (f.channel !== undefined) return [`${column} IN (SELECT d.id FROM "Conversation" d WHERE d."workspaceId" = ${p(scope.workspaceId)} AND d."channelId" = ${p(f.channel)})`];
  return [];
}

/**
 * The filter on message `m`. PostgreSQL's placeholders are numbered from `from` (the statement's
 * parameters before these); SQLite's `?` take the params where the clause stands. A list is one
 * parameter (a JSON array on SQLite, an array on PostgreSQL): the statement's text stays the same
 * whatever its length, and so does its prepared plan.
 */
export function filterSql(provider: Provider, f: HistoryFilter, scope: Scope, from = 1): FilterSql {
  const w = writer(provider, from);
  const parts: string[] = [];
  if (f.after) parts.push(`m."createdAt" >= ${w.p(sqlTime(provider, f.after))}`);
  if (f.before) parts.push(`m."createdAt" < ${w.p(sqlTime(provider, f.before))}`);
  if (f.authorIds) parts.push(`m."authorId" ${w.among(f.authorIds)}`);
  parts.push(...channelPart(f, scope, `m."conversationId"`, w));
  return w.done(parts);
}

/**
 * The channel part alone, on a conversation id `column`: a statement that reads conversation by
 * conversation (channel knowledge on PostgreSQL) reads only the channel's, where the filter on each
 * message made it read every other channel's matches to find none.
 */
export function conversationFilterSql(provider: Provider, f: HistoryFilter, scope: Scope, column: string, from = 1): FilterSql {
  const w = writer(provider, from);
  return w.done(channelPart(f, scope, column, w));
}

/**
 * A date filter's side with more messages than this gets no id bound (it is broad: its matches come
 * soon). Each costs at most about 2.5 ms to look at: SQLite reads the ids from the index itself,
 * PostgreSQL from each row (its index on (workspaceId, createdAt) does not hold them).
 */
export const BOUND_SPAN: Record<Provider, number> = { sqlite: 50_000, postgresql: 10_000 };

/** The message ids a filter's dates can reach (null: no bound on that side). */
export interface IdBounds {
  lo: number | null;
  hi: number | null;
}

/**
 * The statement that reads a date filter's id bounds (null when the filter has no date): every
 * message since `after` has an id at least the smallest of theirs, every message before `before` at
 * most the largest. Exact whatever order messages were stored in (a backfilled old message has a
 * large id: it widens the bound, and is still inside it). Read from the (workspaceId, createdAt)
 * index, at most BOUND_SPAN entries a side; a side with more gets none. A word's matches read
 * newest first (a full-text index's rowids, a conversation's (conversationId, id) index) then skip
 * what the dates rule out, where they read every match to find the few a narrow date lets through.
 */
export function idBoundsSql(provider: Provider, f: HistoryFilter, workspaceId: string): FilterSql | null {
  if (!f.after && !f.before) return null;
  const w = writer(provider, 1);
  // In the index's order from the date outwards: PostgreSQL otherwise took a sequential scan for a
  // broad date, which reads the table from its oldest rows until it has BOUND_SPAN newer ones.
  const span = BOUND_SPAN[provider];
  const side = (at: Date | undefined, op: ">=" | "<", agg: "min" | "max", order: "ASC" | "DESC"): string =>
    at
      ? `(SELECT CASE WHEN count(*) <= ${span} THEN coalesce(${agg}(id), 0) END FROM (SELECT id FROM "Message" WHERE "workspaceId" = ${w.p(workspaceId)} AND "createdAt" ${op} ${w.p(sqlTime(provider, at))} ORDER BY "createdAt" ${order} LIMIT ${span + 1}) b)`
      : "NULL";
  const sql = `SELECT ${side(f.after, ">=", "min", "ASC")}, ${side(f.before, "<", "max", "DESC")}`;
  return { sql, params: w.done([]).params };
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
