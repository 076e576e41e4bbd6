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
 * Forgetting sticks: each erasure and `forget <id>` leaves tombstones (tombstone-store.ts: the
 * person, a hash of each entry's text, never the text) that every later write, rollback, review and
 * backfill is checked against. The counts `forget me` shows before the confirmation are those of
 * the statements it then runs (plan-store.ts).
 *
 * The rows an erasure changes are cached by other stores: this one drops their caches after it
 * wrote (another replica's caches catch up within their TTLs).
 */
import type { Db } from "../db/client.ts";
import type { PersonScope } from "../ground/types.ts";
import { countErasure, ownEntriesWhere, planErasure, tallied, type ErasureCounts } from "./plan-store.ts";
import { bury } from "./tombstone-store.ts";
import { ERASED_TEXT } from "../history/store/store.ts";

export const TOMBSTONE = ERASED_TEXT;

export const ERASURE_CONFIRM_WINDOW_MS = 10 * 60 * 1000;

/** The stores whose cached rows an erasure changes behind them. */
export interface ErasedCaches {
  memory: { forgetCached(): void };
  skills: { forgetCached(): void };
  sessions: { forgetCached(): void };
  history: { forgetPerson(personId: string): void };
}

export type { ErasureCounts } from "./plan-store.ts";

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

  /** The person's messages an erasure left as a tombstone (`/me` counts them apart from those it holds). */
  async erasedMessages(person: PersonScope): Promise<number> {
    return this.db.message.count({ where: { workspaceId: person.workspaceId, authorId: person.personId, text: TOMBSTONE } });
  }

  /** What `erasePerson` would do now, counted by the same clauses (plan-store.ts); nothing is written. */
  async dryRun(person: PersonScope, opts: { anonymize: boolean }): Promise<ErasureCounts> {
    return countErasure(this.db, await planErasure(this.db, person), opts.anonymize);
  }

  private erase(person: PersonScope, opts: { anonymize: boolean }): Promise<ErasureCounts> {
    const { workspaceId, personId } = person;
    return this.db.$transaction(async (tx) => {
      const found = await tx.person.updateMany({ where: { id: personId, workspaceId }, data: { displayName: null } });
      if (found.count === 0) throw new Error(`no person ${personId} in workspace ${workspaceId}`);
      const plan = await planErasure(tx, person);
      const w = plan.where;
      // Forgetting sticks: the person, and each entry's text (hashed), so nothing brings them back.
      await bury(tx, workspaceId, [
        { kind: "person", personId, forgottenById: personId },
        ...plan.entries.filter((e) => e.text).map((e) => ({ kind: "entry" as const, personId, text: e.text, forgottenById: personId })),
      ]);
      await tx.revision.deleteMany({ where: { entityType: "memory", entityId: { in: plan.entryIds } } });
      await tx.memoryEntry.deleteMany({ where: { id: { in: plan.entryIds } } });
      await tx.revision.deleteMany({ where: { entityType: "skill", entityId: { in: plan.skillIds } } });
      await tx.skill.deleteMany({ where: { id: { in: plan.skillIds } } });
      const proposals = await tx.skillProposal.deleteMany({ where: w.proposals });
      const channelMessages = await tx.message.deleteMany({ where: w.channelMessages });
      // Vectors are made of the text: they go with it (those of deleted messages and entries go with their rows).
      await tx.messageVector.deleteMany({ where: { message: { OR: [w.authored, w.replies] } } });
      const authored = await tx.message.updateMany({ where: w.authored, data: { text: TOMBSTONE } });
      const replies = await tx.message.updateMany({ where: w.replies, data: { text: TOMBSTONE } });
      const cleared = await tx.chatSession.updateMany({ where: w.sessions, data: { snapshot: null, summary: null } });

      let anonymized = 0;
      if (opts.anonymize) {
        anonymized += (await tx.memoryEntry.updateMany({ where: w.anonymizedEntries, data: { createdById: null } })).count;
        anonymized += (await tx.skill.updateMany({ where: w.anonymizedSkills, data: { createdById: null } })).count;
        await tx.revision.updateMany({ where: { workspaceId, actorId: personId }, data: { actorId: null } });
        await tx.skillProposal.updateMany({ where: { workspaceId, proposedById: personId }, data: { proposedById: null } });
        await tx.skillProposal.updateMany({ where: { workspaceId, decidedById: personId }, data: { decidedById: null } });
        // Prompt snapshots name who taught each shared item: every open session of the workspace
        // takes a new one, so no running session keeps their name (the text stays, unnamed).
        await tx.chatSession.updateMany({ where: { conversation: { workspaceId }, endedAt: null, snapshot: { not: null } }, data: { snapshot: null } });
      }
      return tallied(plan, { proposals: proposals.count, channelMessages: channelMessages.count, messages: authored.count + replies.count, sessionsCleared: cleared.count, anonymized });
    });
  }

  /** Deletes one of the person's own profile entries (or a pending entry they proposed), with its revisions. */
  async forgetEntry(person: PersonScope, entryId: string): Promise<boolean> {
    const deleted = await this.db.$transaction(async (tx) => {
      const entry = await tx.memoryEntry.findFirst({ where: { id: entryId, ...ownEntriesWhere(person) } });
      if (!entry) return false;
      if (entry.text) await bury(tx, person.workspaceId, [{ kind: "entry", personId: person.personId, text: entry.text, forgottenById: person.personId }]);
      await tx.revision.deleteMany({ where: { entityType: "memory", entityId: entry.id } });
      await tx.memoryEntry.delete({ where: { id: entry.id } });
      return true;
    });
    this.caches.memory.forgetCached();
    return deleted;
  }

  /**
   * A channel lesson or team rule `forget <id>` archived (it is shared, so archived, not deleted):
   * its text is forgotten all the same, so no rollback or later write brings it back.
   */
  async forgetShared(person: PersonScope, text: string): Promise<void> {
    await bury(this.db, person.workspaceId, [{ kind: "entry", text, forgottenById: person.personId }]);
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
