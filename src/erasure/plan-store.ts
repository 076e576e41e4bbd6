/**
 * What a person's erasure (`forget me`) touches, found once and read only: the ids of their own
 * entries and private skills, their DMs and sessions, and the WHERE clause of every statement the
 * erasure runs. `forget me` shows the counts of these clauses before the person confirms, and the
 * erasure runs the same clauses, so what it reports having done is what it said it would do
 * (unless something changed in between). The clauses are disjoint, so their order does not matter.
 */
import type { Tx } from "../db/revisions.ts";
import type { PersonScope } from "../ground/types.ts";
import { pendingWhere } from "../memory/store.ts";

export interface ErasureCounts {
  profileEntries: number;
  /** Entries they proposed and changes to team skills proposed from their conversations, still waiting. */
  pendingEntries: number;
  privateSkills: number;
  messages: number;
  /** Their messages kept from listened channels (channel knowledge): deleted, not tombstoned. */
  channelMessages: number;
  sessionsCleared: number;
  anonymized: number;
}

/** The person's profile entries and the pending entries they proposed. */
export function ownEntriesWhere(person: PersonScope) {
  return { workspaceId: person.workspaceId, OR: [{ scope: "user", ownerId: person.personId }, pendingWhere(person)] };
}

export type ErasurePlan = Awaited<ReturnType<typeof planErasure>>;

export async function planErasure(tx: Tx, person: PersonScope) {
  const { workspaceId, personId } = person;
  const entries = await tx.memoryEntry.findMany({ where: ownEntriesWhere(person), select: { id: true, status: true, text: true } });
  const entryIds = entries.map((e) => e.id);
  const skills = await tx.skill.findMany({ where: { workspaceId, scope: "user", ownerId: personId, bundled: false }, select: { id: true } });
  const skillIds = skills.map((s) => s.id);
  const dms = await tx.conversation.findMany({ where: { workspaceId, isDm: true, ownerId: personId }, select: { id: true } });
  const dmIds = dms.map((c) => c.id);
  // Snapshots freeze the person's profile; summaries may quote them: both go wherever they spoke.
  const spokeIn = await tx.message.findMany({ where: { workspaceId, authorId: personId, sessionId: { not: null } }, select: { sessionId: true }, distinct: ["sessionId"] });
  const sessionIds = [...new Set(spokeIn.map((m) => m.sessionId).filter((id): id is string => id !== null))];
  return {
    entries,
    entryIds,
    skillIds,
    where: {
      // A review's pending change to a team skill came from their conversation: it goes, unjudged.
      proposals: { workspaceId, proposedById: personId, status: "pending" },
      // What they said in listened channels is theirs, not a record of talking to cairn: it goes whole.
      channelMessages: { workspaceId, authorId: personId, role: "channel" },
      authored: { workspaceId, authorId: personId, role: { not: "channel" } },
      replies: { workspaceId, conversationId: { in: dmIds }, role: "assistant" },
      sessions: { OR: [{ id: { in: sessionIds } }, { conversationId: { in: dmIds } }] },
      // Team entries and skills they wrote keep their text; only their name goes (own ones are deleted).
      anonymizedEntries: { workspaceId, createdById: personId, id: { notIn: entryIds } },
      anonymizedSkills: { workspaceId, createdById: personId, id: { notIn: skillIds } },
    },
  };
}

/** What the erasure would do, counted by the plan's clauses; nothing is written. */
export async function countErasure(tx: Tx, plan: ErasurePlan, anonymize: boolean): Promise<ErasureCounts> {
  const w = plan.where;
  const proposals = await tx.skillProposal.count({ where: w.proposals });
  const channelMessages = await tx.message.count({ where: w.channelMessages });
  const authored = await tx.message.count({ where: w.authored });
  const replies = await tx.message.count({ where: w.replies });
  const sessions = await tx.chatSession.count({ where: w.sessions });
  const entries = anonymize ? await tx.memoryEntry.count({ where: w.anonymizedEntries }) : 0;
  const skills = anonymize ? await tx.skill.count({ where: w.anonymizedSkills }) : 0;
  return tallied(plan, { proposals, channelMessages, messages: authored + replies, sessionsCleared: sessions, anonymized: entries + skills });
}

/** The counts of a plan, from what its clauses matched (counted, or changed). */
export function tallied(plan: ErasurePlan, n: { proposals: number; channelMessages: number; messages: number; sessionsCleared: number; anonymized: number }): ErasureCounts {
  return {
    profileEntries: plan.entries.filter((e) => e.status !== "pending").length,
    pendingEntries: plan.entries.filter((e) => e.status === "pending").length + n.proposals,
    privateSkills: plan.skillIds.length,
    messages: n.messages,
    channelMessages: n.channelMessages,
    sessionsCleared: n.sessionsCleared,
    anonymized: n.anonymized,
  };
}
