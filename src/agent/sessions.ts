/**
 * Conversation sessions. A session ends after an idle gap or on request; the next message starts a
 * new one with a fresh snapshot. The snapshot is frozen for the session's life so the system prompt
 * stays byte-identical turn to turn (prompt caching): memory writes reach the prompt at the next
 * session, or when compression refreshes it.
 */
import { z } from "zod";
import type { ConversationScope } from "../ground/types.ts";
import type { ChatSession, SessionStore } from "./session-store.ts";
import { memoize } from "../ground/cache/memoize.ts";

/**
 * The frozen part of the system prompt. `shared` (team/channel memory, skills index) is the same
 * for everyone in the conversation; `profiles` holds each speaker's own profile block, frozen the
 * first time they speak in the session, so one person's profile never enters another's prompt.
 */
export const snapshotSchema = z.object({
  shared: z.string(),
  profiles: z.record(z.string(), z.string()),
  /** Ids of the team rules in `shared`: each reply's trace records them (its rules are judged by results). */
  rules: z.array(z.string()).optional(),
  /** Ids of the team and channel facts in `shared`, and of each speaker's facts in their profile: the trace records those of a reply's prompt (why this answer?). */
  facts: z.array(z.string()).optional(),
  profileFacts: z.record(z.string(), z.array(z.string())).optional(),
});
export type Snapshot = z.infer<typeof snapshotSchema>;

/**
 * A session's snapshot, parsed once per text: every turn of the session reads it, and its text
 * changes only when a new speaker's profile is added or compression refreshes it (parsing and
 * checking it was about 4% of a quiet SQLite turn's time). Frozen, since turns share it: a snapshot
 * is changed by making a new one (turn/snapshot.ts).
 */
const parsedSnapshot = memoize((text: string): Snapshot | null => {
  const parsed = snapshotSchema.safeParse(JSON.parse(text));
  if (!parsed.success) return null;
  const s = parsed.data;
  for (const part of [s.profiles, s.rules, s.facts, s.profileFacts, ...Object.values(s.profileFacts ?? {})]) if (part) Object.freeze(part);
  return Object.freeze(s);
}, 1_000);

export function readSnapshot(session: ChatSession): Snapshot | null {
  return session.snapshot ? parsedSnapshot(session.snapshot) : null;
}

/**
 * Activity is recorded to the minute: idle gaps are hours long, and writing the session row on
 * every message of a lively conversation would cost a statement per message for nothing.
 */
const ACTIVITY_RESOLUTION_MS = 60_000;

/** Session rules on top of the session store: when a session goes idle, what its snapshot holds. */
export class SessionManager {
  constructor(
    private readonly store: SessionStore,
    private readonly idleMs: number,
  ) {}

  /** After session rows were changed behind the store (an erasure clears snapshots and summaries). */
  forgetCached(): void {
    this.store.forgetCached();
  }

  /** A conversation this process just created has no session yet: its first message need not look. */
  noneOpen(conversationId: string, byMessage: boolean): void {
    this.store.noneOpen(conversationId, byMessage);
  }

  /**
   * Whether the conversation's open session is its first, in a conversation this process created for
   * a person's message (session-store.ts `unended`): then nothing was said before it. False when unsure.
   */
  inFirstSession(scope: ConversationScope): boolean {
    return this.store.inFirstSession(scope.conversationId);
  }

  /** The session this message belongs to: the open one if it has not gone idle, else a new one. */
  async current(scope: ConversationScope, now: Date): Promise<{ session: ChatSession; isNew: boolean }> {
    const open = await this.store.open(scope);
    const idle = open ? now.getTime() - open.lastActivityAt.getTime() : Infinity;
    if (open && idle <= this.idleMs) {
      if (idle < ACTIVITY_RESOLUTION_MS) return { session: open, isNew: false };
      return { session: await this.store.touch(open.id, now), isNew: false };
    }
    if (open) await this.store.endIdle(open.id, now);
    return this.store.start(scope, now);
  }

  /** A session of this conversation as it stands; throws for a session of another conversation. */
  get(scope: ConversationScope, sessionId: string): Promise<ChatSession> {
    return this.store.get(scope, sessionId);
  }

  /** The session of this conversation before `sessionId` (ended by idle time or `/new`), or null. */
  previous(scope: ConversationScope, sessionId: string): Promise<ChatSession | null> {
    return this.store.previous(scope, sessionId);
  }

  /** Ends the open session (`/new`, console start-up); the next message starts a fresh one. */
  end(scope: ConversationScope, reason: "request" | "restart", now = new Date()): Promise<boolean> {
    return this.store.end(scope, reason, now);
  }

  saveSnapshot(sessionId: string, snapshot: Snapshot): Promise<void> {
    return this.store.saveSnapshot(sessionId, JSON.stringify(snapshot));
  }

  saveSummary(sessionId: string, summary: string, throughId: number, snapshot: Snapshot): Promise<void> {
    return this.store.saveSummary(sessionId, summary, throughId, JSON.stringify(snapshot));
  }
}
