/** A workspace's memory entries with their revisions and lifetimes, read once per report. */
import type { WorkspaceScope } from "../ground/scope.ts";
import { byEntity, lifetimeOf, type Lifetime, type RevisionRow } from "./lifetime.ts";
import type { MemoryRow, ReportStore } from "./report-store.ts";

export interface HistoryEntry extends MemoryRow {
  revisions: RevisionRow[];
  life: Lifetime;
}

export async function loadMemoryHistory(reports: ReportStore, scope: WorkspaceScope): Promise<HistoryEntry[]> {
  const { entries: rows, revisions: revs } = await reports.memory(scope);
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
