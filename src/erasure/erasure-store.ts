/**
 * A person's right to be forgotten. This is a real deletion, not an archive: profile entries and
 * private skills go with every revision that held their text; the person's stored messages (and
 * cairn's replies in their DMs) are replaced by a tombstone so conversations stay consistent; the
 * frozen prompt snapshots and summaries that held their words are cleared. Team and channel entries
 * they contributed stay (they belong to the team), optionally without their name.
 *
 * "forget me" takes two steps: the request, then `forget me confirm` within a window. The request
 * is a database row, not process memory, so the confirmation may reach another replica than the
 * request did (Slack and Discord hand each event to any of them), or the same one after a restart.
 *
 * The rows an erasure changes are cached by other stores: this one drops their caches after it
 * wrote (another replica's caches catch up within their TTLs).
 */
import type { Db } from "../db/client.ts";
import type { PersonScope } from "../ground/types.ts";
import { pendingWhere } from "../memory/store.ts";

export const TOMBSTONE = "[erased at the author's request]";

export const ERASURE_CONFIRM_WINDOW_MS = 10 * 60 * 1000;

/** The stores whose cached rows an erasure changes behind them. */
export interface ErasedCaches {
  memory: { forgetCached(): void };
  skills: { forgetCached(): void };
  sessions: { forgetCached(): void };
  history: { forgetPerson(personId: string): void };
}

/** The person's profile entries and the pending entries they proposed. */
function ownEntriesWhere(person: PersonScope) {
  return { workspaceId: person.workspaceId, OR: [{ scope: "user", ownerId: person.personId }, pendingWhere(person)] };
}

export interface ErasureCounts {
  profileEntries: number;
  pendingEntries: number;
  privateSkills: number;
  messages: number;
  /** Their messages kept from listened channels (channel knowledge): deleted, not tombstoned. */
  channelMessages: number;
  sessionsCleared: number;
  anonymized: number;
}

export class ErasureStore {
  constructor(
    private readonly db: Db,
    private readonly caches: ErasedCaches,
  ) {}

  /** A person's rows are all in their own workspace: every statement here is kept to it. */
  async erasePerson(person: PersonScope, opts: { anonymize: boolean }): Promise<ErasureCounts> {
    const counts = await this.erase(person, opts);
    this.caches.history.forgetPerson(person.personId);
    this.caches.sessions.forgetCached();
    this.caches.memory.forgetCached();
    this.caches.skills.forgetCached();
    return counts;
  }

  private erase(person: PersonScope, opts: { anonymize: boolean }): Promise<ErasureCounts> {
    const { workspaceId, personId } = person;
    return this.db.$transaction(async (tx) => {
      const found = await tx.person.updateMany({ where: { id: personId, workspaceId }, data: { displayName: null } });
      if (found.count === 0) throw new Error(`no person ${personId} in workspace ${workspaceId}`);
      const entries = await tx.memoryEntry.findMany({
        where: ownEntriesWhere(person),
        select: { id: true, status: true },
      });
      const entryIds = entries.map((e) => e.id);
      await tx.revision.deleteMany({ where: { entityType: "memory", entityId: { in: entryIds } } });
      await tx.memoryEntry.deleteMany({ where: { id: { in: entryIds } } });

      const skills = await tx.skill.findMany({ where: { workspaceId, scope: "user", ownerId: personId, bundled: false }, select: { id: true } });
      const skillIds = skills.map((s) => s.id);
      await tx.revision.deleteMany({ where: { entityType: "skill", entityId: { in: skillIds } } });
      await tx.skill.deleteMany({ where: { id: { in: skillIds } } });

      const dms = await tx.conversation.findMany({ where: { workspaceId, isDm: true, ownerId: personId }, select: { id: true } });
      const dmIds = dms.map((c) => c.id);
      // What they said in listened channels is theirs, not a record of talking to cairn: it goes whole.
      const channelMessages = await tx.message.deleteMany({ where: { workspaceId, authorId: personId, role: "channel" } });
      const authored = await tx.message.updateMany({ where: { workspaceId, authorId: personId }, data: { text: TOMBSTONE } });
      const replies = await tx.message.updateMany({ where: { workspaceId, conversationId: { in: dmIds }, role: "assistant" }, data: { text: TOMBSTONE } });

      // Snapshots freeze the person's profile; summaries may quote them. Clear both wherever they spoke.
      const spokeIn = await tx.message.findMany({ where: { workspaceId, authorId: personId, sessionId: { not: null } }, select: { sessionId: true }, distinct: ["sessionId"] });
      const sessionIds = [...new Set(spokeIn.map((m) => m.sessionId).filter((id): id is string => id !== null))];
      const cleared = await tx.chatSession.updateMany({
        where: { OR: [{ id: { in: sessionIds } }, { conversationId: { in: dmIds } }] },
        data: { snapshot: null, summary: null },
      });

      let anonymized = 0;
      if (opts.anonymize) {
        anonymized += (await tx.memoryEntry.updateMany({ where: { workspaceId, createdById: personId }, data: { createdById: null } })).count;
        anonymized += (await tx.skill.updateMany({ where: { workspaceId, createdById: personId }, data: { createdById: null } })).count;
        await tx.revision.updateMany({ where: { workspaceId, actorId: personId }, data: { actorId: null } });
      }
      return {
        profileEntries: entries.filter((e) => e.status !== "pending").length,
        pendingEntries: entries.filter((e) => e.status === "pending").length,
        privateSkills: skillIds.length,
        messages: authored.count + replies.count,
        channelMessages: channelMessages.count,
        sessionsCleared: cleared.count,
        anonymized,
      };
    });
  }

  /** Deletes one of the person's own profile entries (or a pending entry they proposed), with its revisions. */
  async forgetEntry(person: PersonScope, entryId: string): Promise<boolean> {
    const deleted = await this.db.$transaction(async (tx) => {
      const entry = await tx.memoryEntry.findFirst({ where: { id: entryId, ...ownEntriesWhere(person) } });
      if (!entry) return false;
      await tx.revision.deleteMany({ where: { entityType: "memory", entityId: entry.id } });
      await tx.memoryEntry.delete({ where: { id: entry.id } });
      return true;
    });
    this.caches.memory.forgetCached();
    return deleted;
  }

  /** Records (or restarts) the person's request at `now`; requests of anyone left to expire are dropped. */
  async requestErasure(person: PersonScope, now: Date): Promise<void> {
    await this.db.erasureRequest.upsert({
      where: { personId: person.personId },
      create: { personId: person.personId, workspaceId: person.workspaceId, requestedAt: now },
      update: { workspaceId: person.workspaceId, requestedAt: now },
    });
    await this.db.erasureRequest.deleteMany({ where: { requestedAt: { lt: new Date(now.getTime() - ERASURE_CONFIRM_WINDOW_MS) } } });
  }

  /**
   * Takes the person's request if it is still within the window: the deletion is the claim, so of two
   * replicas confirming at once exactly one erases.
   */
  async claimErasure(person: PersonScope, now: Date): Promise<boolean> {
    const { count } = await this.db.erasureRequest.deleteMany({
      where: { personId: person.personId, workspaceId: person.workspaceId, requestedAt: { gte: new Date(now.getTime() - ERASURE_CONFIRM_WINDOW_MS) } },
    });
    return count > 0;
  }
}
