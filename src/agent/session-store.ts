/**
 * Session rows (ChatSession): which session of a conversation is open, and each session's frozen
 * snapshot and summary. The rules (idle gaps, what a snapshot holds) are sessions.ts's.
 *
 * Rows are cached as this process last read or wrote them. Every message and every turn needs its
 * session, and all of a session's writes go through this store, so the cached rows stay current
 * here; a change made by another replica (a `/new` handled there) shows within the TTL, and
 * `forgetCached` drops everything after writes made elsewhere in this process (an erasure).
 *
 * Session rows have no workspace of their own: their conversation's id, unique across workspaces,
 * is the whole key of a conversation scope's reads.
 */
import type { Database, Db } from "../db/client.ts";
import { sqlTime, type DirectSql, type SqlParam } from "../db/direct.ts";
import { typedRows } from "../db/typed-rows.ts";
import type { Provider } from "../db/migrate.ts";
import { cuid } from "../db/cuid.ts";
import type { ChatSession } from "../db/generated/sqlite/client.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import { columnArrays, insertBatch, sqliteWriteBatch } from "../db/insert-batch.ts";
import type { ConversationScope } from "../ground/types.ts";

export type { ChatSession } from "../db/generated/sqlite/client.ts";

const SESSION_CACHE_TTL_MS = 60_000;

/** Every ChatSession column and how it is read (db/typed-rows.ts), for `readSql`'s statements. */
const SESSION = typedRows<ChatSession>({
  id: "text",
  conversationId: "text",
  startedAt: "time",
  lastActivityAt: "time",
  endedAt: "time",
  endReason: "text",
  snapshot: "text",
  summary: "text",
  summaryThroughId: "int",
});

/** `openOf`'s value for a conversation known to have no open session. */
const NONE = "";

export class SessionStore {
  private readonly rows = new TtlCache<string, ChatSession>({ ttlMs: SESSION_CACHE_TTL_MS, max: 10_000 });
  /** Conversation id -> id of its open session (NONE: known to have none). */
  private readonly openOf = new TtlCache<string, string>({ ttlMs: SESSION_CACHE_TTL_MS, max: 10_000 });
  /**
   * Conversations this process created for a person's message whose first session has not ended:
   * nothing was said in them before that session, so it has no previous session to carry over and no earlier reply anyone
   * could have corrected. Forgotten when a session ends (or after the TTL: then read as any other).
   */
  private readonly unended = new TtlCache<string, true>({ ttlMs: SESSION_CACHE_TTL_MS, max: 10_000 });

  private readonly db: Db;
  private readonly direct: DirectSql;
  private readonly saveSnapshotSql: string;
  /** A new open session; no row back when the conversation has one open already (ChatSession_one_open_idx). */
  private readonly startSql: string;
  private readonly provider: Provider;
  /**
   * Sessions that start together are opened together (db/insert-batch.ts): in a burst of new
   * conversations each was a commit, and on PostgreSQL a round trip. PostgreSQL: one statement;
   * SQLite: one transaction. Each new session's row comes back by its id; none when its
   * conversation had one open already.
   */
  private readonly startBatch: (params: string[]) => Promise<unknown[] | null>;
  /** Snapshots taken at the same moment (new sessions' first turns) are saved together, the same way. */
  private readonly snapshotBatch: (params: string[]) => Promise<unknown[] | null>;
  /** The reads a message or a new session's first turn sends (open, previous, get), below Prisma. */
  private readonly readSql: { open: string; previous: string; get: string };

  constructor(database: Database) {
    this.db = database.prisma;
    this.direct = database.direct;
    this.provider = database.provider;
    this.saveSnapshotSql =
      database.provider === "sqlite" ? `UPDATE ChatSession SET snapshot = ? WHERE id = ?` : `UPDATE "ChatSession" SET snapshot = $1 WHERE id = $2`;
    this.startSql =
      database.provider === "sqlite"
        ? `INSERT INTO ChatSession (id, conversationId, startedAt, lastActivityAt) VALUES (?, ?, ?, ?) ON CONFLICT (conversationId) WHERE endedAt IS NULL DO NOTHING RETURNING id`
        : `INSERT INTO "ChatSession" (id, "conversationId", "startedAt", "lastActivityAt") VALUES ($1, $2, $3, $4) ON CONFLICT ("conversationId") WHERE "endedAt" IS NULL DO NOTHING RETURNING id`;
    const pg = database.provider === "postgresql";
    const p = (n: number): string => (pg ? `$${n}` : "?");
    const startMany = `INSERT INTO "ChatSession" (id, "conversationId", "startedAt", "lastActivityAt") SELECT * FROM unnest($1::text[], $2::text[], $3::timestamp(3)[], $4::timestamp(3)[]) ON CONFLICT ("conversationId") WHERE "endedAt" IS NULL DO NOTHING RETURNING id`;
    // Keyed by the session's id: the rows return it first; a new session's parameters start with it,
    // a snapshot's end with it.
    const idOfRow = (row: readonly unknown[]): string => String(row[0]);
    const byId = { row: idOfRow, item: (params: readonly SqlParam[]) => String(params[0]) };
    const bySnapshotId = { row: idOfRow, item: (params: readonly SqlParam[]) => String(params[1]) };
    this.startBatch = pg
      ? insertBatch<string[]>({
          one: (params) => this.direct.rows(this.startSql, params),
          many: (items) => this.direct.rows(startMany, columnArrays(items)),
          rowKey: byId.row,
          itemKey: byId.item,
        })
      : sqliteWriteBatch(this.direct, this.startSql, byId);
    const saveMany = `UPDATE "ChatSession" AS s SET snapshot = v.snapshot FROM unnest($1::text[], $2::text[]) AS v(snapshot, id) WHERE s.id = v.id RETURNING s.id`;
    this.snapshotBatch = pg
      ? insertBatch<string[]>({
          one: (params) => this.direct.rows(`${this.saveSnapshotSql} RETURNING id`, params),
          many: (items) => this.direct.rows(saveMany, columnArrays(items)),
          rowKey: bySnapshotId.row,
          itemKey: bySnapshotId.item,
        })
      : sqliteWriteBatch(this.direct, `${this.saveSnapshotSql} RETURNING id`, bySnapshotId);
    const select = `SELECT ${SESSION.select(database.provider)} FROM "ChatSession"`;
    this.readSql = {
      open: `${select} WHERE "conversationId" = ${p(1)} AND "endedAt" IS NULL ORDER BY "startedAt" DESC LIMIT 1`,
      previous: `${select} WHERE "conversationId" = ${p(1)} AND id <> ${p(2)} AND "endedAt" IS NOT NULL ORDER BY "startedAt" DESC LIMIT 1`,
      get: `${select} WHERE id = ${p(1)} AND "conversationId" = ${p(2)}`,
    };
  }

  /** One row of `readSql`'s statements, or null. */
  private async readOne(sql: string, params: SqlParam[]): Promise<ChatSession | null> {
    const [r] = await this.direct.rows(sql, params);
    return r ? SESSION.of(r) : null;
  }

  private remember(row: ChatSession): ChatSession {
    this.rows.set(row.id, row);
    if (row.endedAt === null) this.openOf.set(row.conversationId, row.id);
    else if (this.openOf.get(row.conversationId) === row.id) this.openOf.delete(row.conversationId);
    return row;
  }

  /** After session rows were changed behind this store (an erasure clears snapshots and summaries). */
  forgetCached(): void {
    this.rows.clear();
    this.openOf.clear();
    this.unended.clear();
  }

  /**
   * A conversation this process just created has no session yet: its first message need not look.
   * `byMessage`: created for a person's message, whose session is then its first (`unended`); one
   * created for cairn's own post may hold a reply someone corrects before anyone writes in it.
   */
  noneOpen(conversationId: string, byMessage: boolean): void {
    this.openOf.set(conversationId, NONE);
    if (byMessage) this.unended.set(conversationId, true);
  }

  /** True only for a conversation this process created whose first session is still open (`unended`). */
  inFirstSession(conversationId: string): boolean {
    return this.unended.get(conversationId) === true;
  }

  /** The conversation's open session, if any. */
  async open(scope: ConversationScope): Promise<ChatSession | null> {
    const { conversationId } = scope;
    const id = this.openOf.get(conversationId);
    if (id === NONE) return null;
    const cached = id === undefined ? undefined : this.rows.get(id);
    if (cached && cached.endedAt === null) return cached;
    const row = await this.readOne(this.readSql.open, [conversationId]);
    return row && this.remember(row);
  }

  /** Records activity in an open session. */
  async touch(sessionId: string, now: Date): Promise<ChatSession> {
    return this.remember(await this.db.chatSession.update({ where: { id: sessionId }, data: { lastActivityAt: now } }));
  }

  /** Ends a session gone idle. */
  async endIdle(sessionId: string, now: Date): Promise<void> {
    const ended = this.remember(await this.db.chatSession.update({ where: { id: sessionId }, data: { endedAt: now, endReason: "idle" } }));
    this.unended.delete(ended.conversationId);
  }

  /**
   * Opens a new session in the conversation; `isNew` false when another replica opened one a
   * moment ago, for a message of the same conversation (a conversation has one open session: a
   * unique index, migration turn_leases): that one is this message's too.
   */
  async start(scope: ConversationScope, now: Date): Promise<{ session: ChatSession; isNew: boolean }> {
    const { conversationId } = scope;
    // Below Prisma (direct.ts): every new session, so every new conversation's first message, sends it.
    const session: ChatSession = { id: cuid(), conversationId, startedAt: now, lastActivityAt: now, endedAt: null, endReason: null, snapshot: null, summary: null, summaryThroughId: null };
    const at = sqlTime(this.provider, now);
    const params = [session.id, conversationId, at, at];
    const inserted = await this.startBatch(params);
    if (inserted) return { session: this.remember(session), isNew: true };
    this.openOf.delete(conversationId);
    const row = await this.readOne(this.readSql.open, [conversationId]);
    if (!row) throw new Error(`conversation ${conversationId} has an open session that could not be read`);
    return { session: this.remember(row), isNew: false };
  }

  /**
   * A session of this conversation as it stands (its snapshot and summary may have changed since it
   * was opened). Throws for a session of another conversation.
   */
  async get(scope: ConversationScope, sessionId: string): Promise<ChatSession> {
    const { conversationId } = scope;
    const cached = this.rows.get(sessionId);
    if (cached?.conversationId === conversationId) return cached;
    const row = await this.readOne(this.readSql.get, [sessionId, conversationId]);
    if (!row) throw new Error(`no session ${sessionId} in conversation ${conversationId}`);
    return this.remember(row);
  }

  /** The conversation's session before `sessionId`: the latest one ended, or null. */
  async previous(scope: ConversationScope, sessionId: string): Promise<ChatSession | null> {
    if (this.inFirstSession(scope.conversationId)) return null;
    const row = await this.readOne(this.readSql.previous, [scope.conversationId, sessionId]);
    return row && this.remember(row);
  }

  /** Ends the conversation's open session; whether there was one. */
  async end(scope: ConversationScope, reason: "request" | "restart", now: Date): Promise<boolean> {
    const { conversationId } = scope;
    this.unended.delete(conversationId);
    const res = await this.db.chatSession.updateMany({ where: { conversationId, endedAt: null }, data: { endedAt: now, endReason: reason } });
    this.rows.deleteWhere((row) => row.conversationId === conversationId);
    this.openOf.delete(conversationId);
    return res.count > 0;
  }

  /**
   * Every new session writes one (its first turn), so it takes the direct path (db/direct.ts). A
   * cached row is updated in place; one not cached is read afresh when next needed.
   */
  async saveSnapshot(sessionId: string, snapshot: string): Promise<void> {
    await this.snapshotBatch([snapshot, sessionId]);
    const row = this.rows.get(sessionId);
    if (row) this.remember({ ...row, snapshot });
  }

  async saveSummary(sessionId: string, summary: string, throughId: number, snapshot: string): Promise<void> {
    this.remember(await this.db.chatSession.update({ where: { id: sessionId }, data: { summary, summaryThroughId: throughId, snapshot } }));
  }
}
