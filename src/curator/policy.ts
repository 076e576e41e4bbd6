/**
 * What the curator may touch: only what the agent wrote on its own. The rules, in one place (see
 * the invariants in curator.ts):
 *
 * Skills. Agent-made = the row's source is `tool` (skill_manage in a conversation), `review` (the
 * background review) or `curator` (an umbrella of an earlier merge), and no revision of it came from
 * a person teaching it (`learn`), a correction (`reaction`) or an import. Pinned and bundled skills
 * are never agent-made. Agent-made skills may go stale, be archived and be merged.
 *
 * Memory entries, by what may be done to them:
 * - archive an unused lesson (deterministic): a lesson whose source is `tool`, `review` or
 *   `curator`, with no person-taught revision. A `tool` lesson may have been saved at a person's
 *   request; archiving it after 60 days unseen loses nothing (rollback restores it), so it counts.
 *   Lessons from corrections (`reaction`) and `/cairn learn` are never archived by the curator.
 * - rewrite (merge, consolidate): only entries the background review wrote (`review`, or `curator`
 *   for an earlier merge), never changed since by anything else (every revision from `review` or
 *   `curator`), never a team rule. A `tool` fact is what a person asked cairn to save in their
 *   words: the curator never rewrites it.
 * - flag a contradiction: an agent-made entry (`tool`, `review`, `curator`, no person-taught
 *   revision) not flagged already. A flag changes neither the text nor the status nor what prompts
 *   show; a person-taught entry is never marked, it is named in the other entry's flag.
 * Pending entries wait for a person and are never touched.
 */
import type { MemoryEntry, Skill } from "./curation-store.ts";

export const AGENT_SOURCES: readonly string[] = ["tool", "review", "curator"];
/** Revisions from these sources mean a person taught (or shipped) the item. */
export const PERSON_SOURCES: readonly string[] = ["learn", "reaction", "import"];
/** The only sources whose entries the curator may rewrite. */
export const REWRITE_SOURCES: readonly string[] = ["review", "curator"];

/** What the revisions of the workspace's items say about them (read in library.ts). */
export interface RevisionFacts {
  /** Items with a revision from a person-teaching source. */
  taught: ReadonlySet<string>;
  /** Items with a revision from outside REWRITE_SOURCES (a person's tool call, a confirmation, a rollback). */
  touched: ReadonlySet<string>;
  /** Items a person brought back (rollback, use of a stale skill): when, latest. */
  restoredAt: ReadonlyMap<string, Date>;
}

type SkillRow = Pick<Skill, "id" | "source" | "pinned" | "bundled" | "workspaceId">;
type EntryRow = Pick<MemoryEntry, "id" | "source" | "kind" | "status" | "flag">;

export function isAgentSkill(skill: SkillRow, facts: RevisionFacts): boolean {
  return !skill.bundled && !skill.pinned && skill.workspaceId !== null && AGENT_SOURCES.includes(skill.source) && !facts.taught.has(skill.id);
}

export function mayArchiveLesson(entry: EntryRow, facts: RevisionFacts): boolean {
  return entry.status === "active" && entry.kind === "lesson" && AGENT_SOURCES.includes(entry.source) && !facts.taught.has(entry.id);
}

export function mayRewriteEntry(entry: EntryRow, facts: RevisionFacts): boolean {
  return entry.status === "active" && entry.kind !== "rule" && entry.flag === null && REWRITE_SOURCES.includes(entry.source) && !facts.touched.has(entry.id);
}

export function mayFlagEntry(entry: EntryRow, facts: RevisionFacts): boolean {
  return entry.status === "active" && entry.flag === null && AGENT_SOURCES.includes(entry.source) && !facts.taught.has(entry.id);
}

/** When the item was last in use: used, created (an umbrella starts fresh), or brought back by a person. */
export function lastSeen(item: { id: string; lastUsedAt: Date | null; createdAt: Date }, facts: RevisionFacts): Date {
  const times = [item.createdAt.getTime(), item.lastUsedAt?.getTime() ?? 0, facts.restoredAt.get(item.id)?.getTime() ?? 0];
  return new Date(Math.max(...times));
}

export const DAY_MS = 24 * 60 * 60 * 1000;

export function idleDays(item: { id: string; lastUsedAt: Date | null; createdAt: Date }, facts: RevisionFacts, now: Date): number {
  return (now.getTime() - lastSeen(item, facts).getTime()) / DAY_MS;
}
