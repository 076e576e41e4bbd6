/** A workspace's memory entries with their revisions and lifetimes, read once per report. */
import type { Db } from "../db/client.ts";
import { byEntity, lifetimeOf, type Lifetime, type RevisionRow } from "./lifetime.ts";

export interface HistoryEntry {
  id: string;
  scope: string;
  kind: string;
  status: string;
  text: string;
  source: string;
  origin: string | null;
  createdById: string | null;
  confidence: number;
  flag: string | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  revisions: RevisionRow[];
  life: Lifetime;
}

export async function loadMemoryHistory(db: Db, workspaceId: string): Promise<HistoryEntry[]> {
  const [rows, revs] = await Promise.all([
    db.memoryEntry.findMany({
      where: { workspaceId },
      select: { id: true, scope: true, kind: true, status: true, text: true, source: true, origin: true, createdById: true, confidence: true, flag: true, lastUsedAt: true, createdAt: true, updatedAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
    db.revision.findMany({
      where: { workspaceId, entityType: "memory" },
      select: { entityId: true, action: true, actorId: true, createdAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
  ]);
  const grouped = byEntity(revs);
  return rows.map((row) => {
    const revisions = grouped.get(row.id) ?? [];
    return { ...row, revisions, life: lifetimeOf(row, revisions) };
  });
}

/** True when the entry has a revision with one of these actions (inside [start, end) when given). */
export function hasRevision(e: HistoryEntry, actions: readonly string[], start?: Date, end?: Date): boolean {
  return e.revisions.some((r) => actions.includes(r.action) && (!start || !end || (r.createdAt >= start && r.createdAt < end)));
}
