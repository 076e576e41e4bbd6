/** What the curator reads of one workspace before planning: its live skills, active entries and their revisions' facts. */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Skill } from "../db/generated/sqlite/client.ts";
import { LIVE_STATUSES } from "../skills/store.ts";
import { REWRITE_SOURCES, PERSON_SOURCES, type RevisionFacts } from "./policy.ts";

export type LibrarySkill = Skill & { fileCount: number };

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

export async function loadLibrary(db: Db, workspaceId: string): Promise<Library> {
  const [skills, names, entries] = await Promise.all([
    db.skill.findMany({ where: { workspaceId, bundled: false, status: { in: LIVE_STATUSES } }, include: { _count: { select: { files: true } } }, orderBy: [{ name: "asc" }] }),
    db.skill.findMany({ where: { OR: [{ workspaceId }, { bundled: true }] }, select: { name: true } }),
    db.memoryEntry.findMany({ where: { workspaceId, status: "active" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  ]);
  const ids = [...skills.map((s) => s.id), ...entries.map((e) => e.id)];
  const revisions = ids.length
    ? await db.revision.findMany({ where: { workspaceId, entityId: { in: ids }, source: { notIn: [...REWRITE_SOURCES] } }, select: { entityId: true, source: true, action: true, createdAt: true } })
    : [];
  const taught = new Set<string>();
  const touched = new Set<string>();
  const restoredAt = new Map<string, Date>();
  for (const r of revisions) {
    touched.add(r.entityId);
    if (PERSON_SOURCES.includes(r.source)) taught.add(r.entityId);
    if (RESTORING.has(r.action) && (restoredAt.get(r.entityId)?.getTime() ?? 0) < r.createdAt.getTime()) restoredAt.set(r.entityId, r.createdAt);
  }
  return {
    workspaceId,
    skills: skills.map(({ _count, ...s }) => ({ ...s, fileCount: _count.files })),
    takenNames: new Set(names.map((n) => n.name)),
    entries,
    facts: { taught, touched, restoredAt },
  };
}
