/** What the curator reads of one workspace before planning: its live skills, active entries and their revisions' facts. */
import type { WorkspaceScope } from "../ground/scope.ts";
import type { CurationStore, LibrarySkill, MemoryEntry } from "./curation-store.ts";
import { REWRITE_SOURCES, PERSON_SOURCES, type RevisionFacts } from "./policy.ts";

export type { LibrarySkill } from "./curation-store.ts";

export interface Library {
  workspaceId: string;
  /** The workspace's live (active or stale) skills, bundled ones excluded. */
  skills: LibrarySkill[];
  /** Every skill name taken in the workspace (any status) or by a bundled skill. */
  takenNames: ReadonlySet<string>;
  /** The workspace's active memory entries (pending and archived ones are not the curator's). */
  entries: MemoryEntry[];
  facts: RevisionFacts;
}

/** Who may see an item: its scope, and the person or channel for private and channel ones. */
export function placementKey(row: { scope: string; ownerId: string | null; channelKey: string | null }): string {
  return `${row.scope}|${row.scope === "user" ? (row.ownerId ?? "") : ""}|${row.scope === "channel" ? (row.channelKey ?? "") : ""}`;
}

/** Revision actions by which a person (or a use) brought an item back. */
const RESTORING = new Set(["restore", "reactivate"]);

export async function loadLibrary(curation: CurationStore, scope: WorkspaceScope): Promise<Library> {
  const { skills, takenNames, entries, revisions } = await curation.library(scope, REWRITE_SOURCES);
  const taught = new Set<string>();
  const touched = new Set<string>();
  const restoredAt = new Map<string, Date>();
  for (const r of revisions) {
    touched.add(r.entityId);
    if (PERSON_SOURCES.includes(r.source)) taught.add(r.entityId);
    if (RESTORING.has(r.action) && (restoredAt.get(r.entityId)?.getTime() ?? 0) < r.createdAt.getTime()) restoredAt.set(r.entityId, r.createdAt);
  }
  return { workspaceId: scope.workspaceId, skills, takenNames: new Set(takenNames), entries, facts: { taught, touched, restoredAt } };
}
