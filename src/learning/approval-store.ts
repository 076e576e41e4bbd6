/**
 * What waits for a person in a workspace (issue 27, "approvals nobody can miss"): team rules and
 * channel lessons proposed as rules, entries asked for the team or held by the safety screen,
 * skill proposals, and conflicts between two active entries. Each is read with the stored message
 * it was posted as or asked in (where it is reminded) and the time it has waited since.
 *
 * Invariants kept here:
 * - Reads take a scope and put its workspace in the WHERE clause; the queue never lists a person's
 *   own profile entries (only what was asked for others to judge).
 * - A reminder is claimed by a conditional update (`remindedAt` still null), so two runs racing
 *   remind once; a reminder whose post failed is handed back (`unmark`) and tried again next run.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, SkillProposal, Workspace } from "../db/generated/sqlite/client.ts";
import { workspaceScope } from "../db/scopes.ts";
import type { WorkspaceScope } from "../ground/scope.ts";

export type { MemoryEntry, SkillProposal, Workspace };

interface Timed {
  /** Since when it waits: its post, else the row's creation. */
  since: Date;
  /** The stored message it was posted as or asked in (its thread); null when there is none. */
  postId: number | null;
}

export type WaitingRow = Timed &
  (
    | { kind: "rule"; entry: MemoryEntry }
    | { kind: "share"; entry: MemoryEntry }
    | { kind: "skill"; proposal: SkillProposal }
    /** `entry` is the newer of the two; `other` the one it contradicts. */
    | { kind: "conflict"; entry: MemoryEntry; other: MemoryEntry }
  );

export type WaitingKind = WaitingRow["kind"];

/** A workspace with something waiting, and the scope its reads take. */
export interface WaitingWorkspace {
  scope: WorkspaceScope;
  workspace: Workspace;
}

/** Every memory row that can be waiting; sorted into kinds by `kindOfEntry`. */
const OPEN_MEMORY = {
  OR: [
    { scope: "team", kind: "rule", status: "pending" },
    { scope: "channel", kind: "lesson", status: "active", proposalMessageId: { not: null }, proposedScope: null },
    { status: "active", proposedScope: "team" },
    { status: "held", proposedScope: { not: null } },
    { status: "active", scope: { in: ["team", "channel"] }, conflictWithId: { not: null } },
  ],
};

function kindOfEntry(e: MemoryEntry): "rule" | "share" | "conflict" {
  if (e.proposedScope !== null) return "share";
  if (e.conflictWithId !== null && e.status === "active" && e.scope !== "user") return "conflict";
  return "rule";
}

const OLDEST = [{ createdAt: "asc" as const }, { id: "asc" as const }];

export class ApprovalStore {
  constructor(private readonly db: Db) {}

  /** Workspaces with anything waiting (a pass over all of them, hourly, would read every workspace). */
  async workspaces(): Promise<WaitingWorkspace[]> {
    const [entries, proposals] = await Promise.all([
      this.db.memoryEntry.findMany({ where: OPEN_MEMORY, select: { workspaceId: true }, distinct: ["workspaceId"] }),
      this.db.skillProposal.findMany({ where: { status: "pending" }, select: { workspaceId: true }, distinct: ["workspaceId"] }),
    ]);
    const ids = [...new Set([...entries, ...proposals].map((r) => r.workspaceId))];
    if (ids.length === 0) return [];
    const rows = await this.db.workspace.findMany({ where: { id: { in: ids } }, orderBy: { createdAt: "asc" } });
    return rows.map((workspace) => ({ scope: workspaceScope(workspace), workspace }));
  }

  /** One workspace by id (a queued digest names it), with its scope; null once it is gone. */
  async workspace(id: string): Promise<WaitingWorkspace | null> {
    const workspace = await this.db.workspace.findFirst({ where: { id } });
    return workspace && { scope: workspaceScope(workspace), workspace };
  }

  /** Everything waiting in the workspace, the longest waiting first. */
  async waiting(scope: WorkspaceScope): Promise<WaitingRow[]> {
    const { workspaceId } = scope;
    const [entries, proposals] = await Promise.all([
      this.db.memoryEntry.findMany({ where: { workspaceId, ...OPEN_MEMORY }, orderBy: OLDEST }),
      this.db.skillProposal.findMany({ where: { workspaceId, status: "pending" }, orderBy: OLDEST }),
    ]);
    const byId = new Map(entries.map((e) => [e.id, e]));
    // `since` is the row's creation until its post is read below.
    const rows: WaitingRow[] = [];
    for (const e of entries) {
      const kind = kindOfEntry(e);
      if (kind === "conflict") {
        const other = byId.get(e.conflictWithId ?? "");
        // A pair is listed once, under its newer entry; a marker whose partner is no longer active is no conflict.
        if (!other || kindOfEntry(other) !== "conflict" || newer(other, e)) continue;
        rows.push({ kind, entry: e, other, postId: e.conflictPostId ?? other.conflictPostId, since: e.createdAt });
      } else if (kind === "share") rows.push({ kind, entry: e, postId: e.sourceMessageId, since: e.createdAt });
      else rows.push({ kind, entry: e, postId: e.proposalMessageId, since: e.createdAt });
    }
    for (const p of proposals) rows.push({ kind: "skill", proposal: p, postId: p.proposalMessageId ?? p.sourceMessageId, since: p.createdAt });
    const ids = rows.flatMap((r) => (r.postId === null ? [] : [r.postId]));
    const posted = new Map(
      ids.length ? (await this.db.message.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true, createdAt: true } })).map((m) => [m.id, m.createdAt]) : [],
    );
    return rows
      .map((r) => ({ ...r, since: (r.postId !== null ? posted.get(r.postId) : undefined) ?? r.since }))
      .sort((a, b) => a.since.getTime() - b.since.getTime());
  }

  /** Claims the one reminder of `row`: false when it was reminded already (by this run or another). */
  async markReminded(row: WaitingRow, at: Date): Promise<boolean> {
    if (row.kind === "skill") {
      return (await this.db.skillProposal.updateMany({ where: { id: row.proposal.id, workspaceId: row.proposal.workspaceId, remindedAt: null }, data: { remindedAt: at } })).count === 1;
    }
    const won = (await this.db.memoryEntry.updateMany({ where: { id: row.entry.id, workspaceId: row.entry.workspaceId, remindedAt: null }, data: { remindedAt: at } })).count === 1;
    if (won && row.kind === "conflict") await this.db.memoryEntry.updateMany({ where: { id: row.other.id, workspaceId: row.other.workspaceId, remindedAt: null }, data: { remindedAt: at } });
    return won;
  }

  /** Hands a claimed reminder back (its post failed): the next run reminds it. */
  async unmark(row: WaitingRow, at: Date): Promise<void> {
    if (row.kind === "skill") {
      await this.db.skillProposal.updateMany({ where: { id: row.proposal.id, workspaceId: row.proposal.workspaceId, remindedAt: at }, data: { remindedAt: null } });
      return;
    }
    const ids = row.kind === "conflict" ? [row.entry.id, row.other.id] : [row.entry.id];
    await this.db.memoryEntry.updateMany({ where: { id: { in: ids }, workspaceId: row.entry.workspaceId, remindedAt: at }, data: { remindedAt: null } });
  }
}

/** Whether `a` was written after `b` (ids break a tie, so one of a pair is always the newer). */
function newer(a: MemoryEntry, b: MemoryEntry): boolean {
  return a.createdAt.getTime() !== b.createdAt.getTime() ? a.createdAt > b.createdAt : a.id > b.id;
}

/** When the row was reminded in its thread; null while it was not. */
export function remindedAtOf(row: WaitingRow): Date | null {
  return row.kind === "skill" ? row.proposal.remindedAt : row.entry.remindedAt;
}
