/**
 * What a search asks of a database, and what comes back: the statements each provider implements
 * (search-sqlite.ts, search-postgres.ts) and the shapes of their results, which search.ts ranks.
 *
 * Invariant: results come only from conversations the asker may see, enforced in the WHERE clause
 * of every statement (candidates, neighbours, counts, what hits show): the asker's workspace, among
 * its DMs only the asker's own, and of listened channels' knowledge only the channels the asker can
 * read now (`Ctx.readable`).
 */
import type { Database } from "../../db/client.ts";
import type { SqlParam } from "../../db/direct.ts";
import type { Scope } from "../../ground/types.ts";
import type { AnalyzedQuery } from "../query.ts";
import type { RankDoc, RankStats } from "../rank.ts";
import { idBoundsSql, isFiltered, type HistoryFilter, type IdBounds } from "./filter.ts";

/**
 * Channel knowledge's candidates are ranked among its newest this many matches in scope: a listened
 * channel's common words match a large share of everything it ever said, and ranking all of it
 * cost seconds. Older messages are still found by the rarer words of a question. History is ranked
 * the same way when every word of a query is common (each in DF_CAP messages or more): at ten
 * million messages such a query matched four million and ranking them took seconds (docs/scale.md),
 * while a query with one rarer word goes through that word's few matches as before.
 */
export const RECENT_WINDOW = 5_000;

/** Document-frequency counts stop here: past it a word's weight is near zero anyway. */
export const DF_CAP = 5000;

/**
 * A candidate as the databases return it: only what ranking reads, as one JSON array per message
 * (id, conversation, author, role, session, createdAt in epoch ms, text).
 * The whole result set comes back as one JSON text (`json_group_array` / `json_agg`) read with
 * JSON.parse: a row per message, through Prisma, became several arrays and an object each, most of
 * what a search allocated and what the collector copied (those rows lived long enough to be
 * promoted). Every search statement takes the direct path (db/direct.ts). What a result shows of its
 * conversation (key, channel, thread) and author (name) is fetched once per conversation and
 * person (`display`), in the statement that fetches the neighbours.
 */
export type Row = [id: number, conversationId: string, authorId: string | null, role: string, sessionId: string | null, createdAt: number, text: string];

/**
 * A neighbour: its anchor's id, its place relative to it, and the message, or just the message's
 * id when it is among the candidates (about half of all neighbours are).
 */
export type NeighbourRow = [anchor: number, dir: number, ...message: Row | [candidateId: number]];

/** Whose conversations and names a search's hits may show. */
export interface Shown {
  conversationIds: string[];
  authorIds: string[];
}

/** What hits show of their conversations and authors. */
export interface Display {
  conversations: [id: string, key: string, isDm: number | boolean, channelId: string, threadId: string | null][];
  people: [id: string, displayName: string | null][];
}

/** One search: the database, the asker's scope, and the session whose messages to leave out ("" for none). */
export interface Ctx {
  database: Database;
  scope: Scope;
  exclude: string;
  /**
   * Listened channels whose knowledge the asker can read now (JSON array text of platform channel
   * ids; "[]" for none): conversations of kind "channel" show only for these.
   */
  readable: string;
  /**
   * session_search's filters: part of every statement that finds candidates (words, CJK, vectors),
   * so a narrow filter finds its matches however many better ones lie outside it. Counts and
   * neighbours are not filtered: they weigh words and lend context, and are no results themselves.
   */
  filter: HistoryFilter;
}

export type Stats = Omit<RankStats, "df">;

export interface Person {
  id: string;
  displayName: string;
}

/** The statements a search sends, as each provider writes them. */
export interface Queries {
  /**
   * The workspace's history figures (messages, their average length, sessions), every person's DMs
   * included and no session left out: collection statistics, as a search engine keeps them for an
   * index rather than for each reader. They only weigh words (IDF) and lengths; which messages an
   * asker may see is every other statement's WHERE clause.
   */
  stats(ctx: Ctx): Promise<Stats>;
  /** Messages in scope containing each word (capped at DF_CAP), in the order given. */
  df(ctx: Ctx, words: string[]): Promise<number[]>;
  /** The workspace's (human) people with a display name. */
  people(ctx: Ctx): Promise<Person[]>;
  /**
   * Messages in scope matching any word; ranked by the database only when `ranked`. `common`: every
   * word is known to be in DF_CAP messages or more (a hint for the plan; the rows are the same).
   */
  /** `fits`: every word's count in scope is known to be small (the unranked look may read all its matches). */
  lexical(ctx: Ctx, words: string[], limit: number, ranked: boolean, common: boolean, fits?: boolean): Promise<Row[]>;
  cjk(ctx: Ctx, q: AnalyzedQuery, limit: number): Promise<Row[]>;
  /**
   * Up to `window` messages on each side of each anchor in its conversation, in scope. The ids come
   * from the (conversationId, id) index first, so the rows are then read by primary key. Messages
   * among `known` (the candidates) come back as their id alone. With them, what `display`
   * returns for `show`.
   */
  neighbours(ctx: Ctx, anchors: RankDoc[], window: number, known: RankDoc[], show: Shown): Promise<{ rows: NeighbourRow[]; display: Display }>;
  /** What hits show: of these conversations those in scope, and these people's names. */
  display(ctx: Ctx, show: Shown): Promise<Display>;
}

const boundsOf = new WeakMap<Ctx, Promise<IdBounds>>();
const idOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The message ids the search's dates can reach (filter.ts `idBoundsSql`), read once a search: its
 * statements bound a word's matches by them, read newest first, and skip what the dates rule out.
 */
export function idBounds(ctx: Ctx): Promise<IdBounds> {
  let bounds = boundsOf.get(ctx);
  if (!bounds) {
    const q = idBoundsSql(ctx.database.provider, ctx.filter, ctx.scope.workspaceId);
    bounds = q ? run(ctx, q.sql, ...q.params).then((rows) => ({ lo: idOrNull(rows[0]?.[0]), hi: idOrNull(rows[0]?.[1]) })) : Promise.resolve({ lo: null, hi: null });
    boundsOf.set(ctx, bounds);
  }
  return bounds;
}

/** The rows of a query that returns its result set as one JSON text (its first column). */
export function parsed<T>(rows: unknown[][]): T[] {
  const j = rows[0]?.[0];
  return typeof j === "string" ? (JSON.parse(j) as T[]) : [];
}

/** One search statement, on the direct path (db/direct.ts, `scan`: a connection of its own): rows as arrays. */
export function run(ctx: Ctx, sql: string, ...params: SqlParam[]): Promise<unknown[][]> {
  // A filtered search's best plan depends on its values (direct.ts `planEach`); it is rare enough to plan each time.
  return ctx.database.direct.scan(sql, params, isFiltered(ctx.filter) ? { planEach: true } : undefined);
}

/** People from rows of (id, displayName). */
export function peopleOf(rows: unknown[][]): Person[] {
  return rows.map((r) => ({ id: r[0] as string, displayName: r[1] as string }));
}

/** A count or average as a number, whichever type the driver returns it as. */
export function n(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : Number(v ?? 0);
}

/** The scope's parameters, in the order both providers' scope clauses number them. */
export const scopeParams = (ctx: Ctx): SqlParam[] => [ctx.scope.workspaceId, ctx.scope.personId, ctx.readable, ctx.exclude];
/** The history part of the scope (its own full-text index): workspace, person, session left out. */
export const chatParams = (ctx: Ctx): SqlParam[] => [ctx.scope.workspaceId, ctx.scope.personId, ctx.exclude];
/** The channel-knowledge part (its own full-text index): workspace, readable channels. */
export const knowledgeParams = (ctx: Ctx): SqlParam[] => [ctx.scope.workspaceId, ctx.readable];
/** Whether the asker can read any listened channel: only then is channel knowledge searched. */
export const readsKnowledge = (ctx: Ctx): boolean => ctx.readable !== "[]";

/**
 * A Display from the columns (conversations, people) of SQLITE_SHOWN (search-sqlite.ts) or pgShown
 * (search-postgres.ts), starting at `at`.
 */
export function displayOf(row: readonly unknown[] | undefined, at: number): Display {
  const json = (v: unknown): string => (typeof v === "string" ? v : "[]");
  return { conversations: JSON.parse(json(row?.[at])) as Display["conversations"], people: JSON.parse(json(row?.[at + 1])) as Display["people"] };
}
