/**
 * Conversation sessions. A session ends after an idle gap or on request; the next message starts a
 * new one with a fresh snapshot. The snapshot is frozen for the session's life so the system prompt
 * stays byte-identical turn to turn (prompt caching): memory writes reach the prompt at the next
 * session, or when compression refreshes it.
 */
import { z } from "zod";
import type { Database, Db } from "../db/client.ts";
import type { DirectSql } from "../db/direct.ts";
import type { ChatSession } from "../db/generated/sqlite/client.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import { isUniqueViolation } from "../db/errors.ts";
import type { ConversationScope } from "../ground/types.ts";

/**
 * The frozen part of the system prompt. `shared` (team/channel memory, skills index) is the same
 * for everyone in the conversation; `profiles` holds each speaker's own profile block, frozen the
 * first time they speak in the session, so one person's profile never enters another's prompt.
 */
export const snapshotSchema = z.object({
  shared: z.string(),
  profiles: z.record(z.string(), z.string()),
});
export type Snapshot = z.infer<typeof snapshotSchema>;

export function readSnapshot(session: ChatSession): Snapshot | null {
  if (!session.snapshot) return null;
  const parsed = snapshotSchema.safeParse(JSON.parse(session.snapshot));
  return parsed.success ? parsed.data : null;
}

/**
 * Activity is recorded to the minute: idle gaps are hours long, and writing the session row on
 * every message of a lively conversation would cost a statement per message for nothing.
 */
const ACTIVITY_RESOLUTION_MS = 60_000;

/**
 * Session rows as this process last read or wrote them. Every message and every turn needs its
 * session, and all of a session's writes go through this class, so the cached rows stay current
 * here; a change made by another replica (a `/new` handled there) shows within the TTL, and
 * `forgetCached` drops everything after writes made elsewhere in this process (an erasure).
 */
const SESSION_CACHE_TTL_MS = 60_000;

/** `openOf`'s value for a conversation known to have no open session. */
const NONE = "";

export class SessionManager {
  private readonly rows = new TtlCache<string, ChatSession>({ ttlMs: SESSION_CACHE_TTL_MS, max: 10_000 });
  /** Conversation id -> id of its open session (NONE: known to have none). */
  private readonly openOf = new TtlCache<string, string>({ ttlMs: SESSION_CACHE_TTL_MS, max: 10_000 });

  private readonly db: Db;
  private readonly direct: DirectSql;
  private readonly saveSnapshotSql: string;

  constructor(
    database: Database,
    private readonly idleMs: number,
  ) {
    this.db = database.prisma;
    this.direct = database.direct;
    this.saveSnapshotSql =
      database.provider === "sqlite" ? `UPDATE ChatSession SET snapshot = ? WHERE id = ?` : `UPDATE "ChatSession" SET snapshot = $1 WHERE id = $2`;
  }

  private remember(row: ChatSession): ChatSession {
    this.rows.set(row.id, row);
    if (row.endedAt === null) this.openOf.set(row.conversationId, row.id);
    else if (this.openOf.get(row.conversationId) === row.id) this.openOf.delete(row.conversationId);
    return row;
  }

  /** After session rows were changed behind this class (an erasure clears snapshots and summaries). */
  forgetCached(): void {
    this.rows.clear();
    this.openOf.clear();
  }

  /** A conversation this process just created has no session yet: its first message need not look. */
  noneOpen(conversationId: string): void {
    this.openOf.set(conversationId, NONE);
  }

  async open(conversationId: string): Promise<ChatSession | null> {
    const id = this.openOf.get(conversationId);
    if (id === NONE) return null;
    const cached = id === undefined ? undefined : this.rows.get(id);
    if (cached && cached.endedAt === null) return cached;
    const row = await this.db.chatSession.findFirst({ where: { conversationId, endedAt: null }, orderBy: { startedAt: "desc" } });
    return row && this.remember(row);
  }

  /** The session this message belongs to: the open one if it has not gone idle, else a new one. */
  async current(conversationId: string, now: Date): Promise<{ session: ChatSession; isNew: boolean }> {
    const open = await this.open(conversationId);
    const idle = open ? now.getTime() - open.lastActivityAt.getTime() : Infinity;
    if (open && idle <= this.idleMs) {
      if (idle < ACTIVITY_RESOLUTION_MS) return { session: open, isNew: false };
      const session = await this.db.chatSession.update({ where: { id: open.id }, data: { lastActivityAt: now } });
      return { session: this.remember(session), isNew: false };
    }
    if (open) this.remember(await this.db.chatSession.update({ where: { id: open.id }, data: { endedAt: now, endReason: "idle" } }));
    try {
      const session = await this.db.chatSession.create({ data: { conversationId, startedAt: now, lastActivityAt: now } });
      return { session: this.remember(session), isNew: true };
    } catch (err) {
      // A conversation has one open session (a unique index, migration turn_leases): another replica
      // opened it a moment ago, for a message of the same conversation. That one is this message's too.
      if (!isUniqueViolation(err)) throw err;
      this.openOf.delete(conversationId);
      const row = await this.db.chatSession.findFirst({ where: { conversationId, endedAt: null } });
      if (!row) throw err;
      return { session: this.remember(row), isNew: false };
    }
  }

  /**
   * A session of this conversation as it stands (its snapshot and summary may have changed since it
   * was opened). Throws for a session of another conversation. Session rows have no workspace of
   * their own: their conversation's id, unique across workspaces, is the whole key.
   */
  async get(scope: ConversationScope, sessionId: string): Promise<ChatSession> {
    const { conversationId } = scope;
    const cached = this.rows.get(sessionId);
    if (cached?.conversationId === conversationId) return cached;
    const row = await this.db.chatSession.findFirst({ where: { id: sessionId, conversationId } });
    if (!row) throw new Error(`no session ${sessionId} in conversation ${conversationId}`);
    return this.remember(row);
  }

  /** Ends the open session (`/new`, console start-up); the next message starts a fresh one. */
  async end(conversationId: string, reason: "request" | "restart", now = new Date()): Promise<boolean> {
    const res = await this.db.chatSession.updateMany({ where: { conversationId, endedAt: null }, data: { endedAt: now, endReason: reason } });
    this.rows.deleteWhere((row) => row.conversationId === conversationId);
    this.openOf.delete(conversationId);
    return res.count > 0;
  }

  /**
   * Every new session writes one (its first turn), so it takes the direct path (db/direct.ts). A
   * cached row is updated in place; one not cached is read afresh when next needed.
   */
  async saveSnapshot(sessionId: string, snapshot: Snapshot): Promise<void> {
    const text = JSON.stringify(snapshot);
    await this.direct.rows(this.saveSnapshotSql, [text, sessionId]);
    const row = this.rows.get(sessionId);
    if (row) this.remember({ ...row, snapshot: text });
  }

  async saveSummary(sessionId: string, summary: string, throughId: number, snapshot: Snapshot): Promise<void> {
    this.remember(
      await this.db.chatSession.update({
        where: { id: sessionId },
        data: { summary, summaryThroughId: throughId, snapshot: JSON.stringify(snapshot) },
      }),
    );
  }
}
