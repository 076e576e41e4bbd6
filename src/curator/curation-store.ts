/**
 * What the curator reads and writes: the workspaces it runs over, one workspace's library (its live
 * skills, active entries and the revisions that say who touched them), and one planned change
 * applied in one transaction.
 *
 * A change is applied with a revision per item it changes (source "curator", the reason, the run
 * id). Every update is conditional on what the plan saw (status, text or content hash, not
 * pinned): a change whose item moved on since (a person pinned, edited, used or archived it) is
 * skipped whole, never half-applied. Nothing is deleted: the strongest write here sets status
 * "archived". The skills index and memory blocks cached in this process are dropped after each.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Skill } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { forgottenAmong } from "../db/tombstones.ts";
import { workspaceScope } from "../db/scopes.ts";
import type { WorkspaceScope } from "../ground/scope.ts";
import type { Cached } from "../revisions/revision-store.ts";
import { checkedMark, RULES_VERSION } from "../safety/scanner.ts";
import { hashOf } from "../skills/store.ts";
import { LIVE_STATUSES } from "../skills/visibility.ts";
import type { Change } from "./changes.ts";

export type { MemoryEntry, Skill } from "../db/generated/sqlite/client.ts";

export type LibrarySkill = Skill & { fileCount: number };

/** A revision's facts as the curator's policy reads them (library.ts). */
export interface RevisionFact {
  entityId: string;
  source: string;
  action: string;
  createdAt: Date;
}

/** One workspace's rows, as read for a curator pass. */
export interface LibraryRows {
  /** The live (active or stale) skills, bundled ones excluded, by name. */
  skills: LibrarySkill[];
  /** Every skill name taken in the workspace (any status) or by a bundled skill. */
  takenNames: string[];
  /** The active memory entries, oldest first. */
  entries: MemoryEntry[];
  /** Those items' revisions from sources other than `rewriteSources`. */
  revisions: RevisionFact[];
}

/** Which run a change belongs to, and when it is made. */
export interface RunStamp {
  runId: string;
  at: Date;
}

export class CurationStore {
  constructor(
    private readonly db: Db,
    private readonly caches: readonly Cached[] = [],
  ) {}

  /** Every workspace, oldest first: the curator's run goes over each. */
  async workspaces(): Promise<WorkspaceScope[]> {
    const rows = await this.db.workspace.findMany({ select: { id: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return rows.map(workspaceScope);
  }

  /** The workspace's library; `rewriteSources`: revisions from these say nothing to the policy and are not read. */
  async library(scope: WorkspaceScope, rewriteSources: readonly string[]): Promise<LibraryRows> {
    const { workspaceId } = scope;
    const [skills, names, entries] = await Promise.all([
      this.db.skill.findMany({ where: { workspaceId, bundled: false, status: { in: LIVE_STATUSES } }, include: { _count: { select: { files: true } } }, orderBy: [{ name: "asc" }] }),
      this.db.skill.findMany({ where: { OR: [{ workspaceId }, { bundled: true }] }, select: { name: true } }),
      this.db.memoryEntry.findMany({ where: { workspaceId, status: "active" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    ]);
    const ids = [...skills.map((s) => s.id), ...entries.map((e) => e.id)];
    const revisions = ids.length
      ? await this.db.revision.findMany({ where: { workspaceId, entityId: { in: ids }, source: { notIn: [...rewriteSources] } }, select: { entityId: true, source: true, action: true, createdAt: true } })
      : [];
    return {
      skills: skills.map(({ _count, ...s }) => ({ ...s, fileCount: _count.files })),
      takenNames: names.map((n) => n.name),
      entries,
      revisions,
    };
  }

  /** True when applied; false when an item changed since the plan was made (nothing written). */
  apply(scope: WorkspaceScope, change: Change, run: RunStamp): Promise<boolean> {
    return applyChange(this.db, change, { workspaceId: scope.workspaceId, ...run }).finally(() => this.caches.forEach((c) => c.forgetCached()));
  }
}

interface Stamp extends RunStamp {
  workspaceId: string;
}

/** The plan's view no longer holds: the change is left out, its transaction rolled back. */
class Moved extends Error {}

const must = (count: number) => {
  if (count !== 1) throw new Moved();
};

/** True when applied; false when an item changed since the plan was made (nothing written). */
async function applyChange(db: Db, c: Change, run: Stamp): Promise<boolean> {
  const prov = (reason: string): Provenance => ({ source: "curator", actorId: null, sourceMessageId: null, reason, runId: run.runId, at: run.at });
  const rev = (tx: Tx, entityType: "skill" | "memory", entityId: string, action: string, oldText: string | null, newText: string | null, reason: string) =>
    writeRevision(tx, { workspaceId: run.workspaceId, entityType, entityId, action, oldText, newText }, prov(reason));
  try {
    await db.$transaction(async (tx) => {
      switch (c.type) {
        case "skill_status": {
          const skill = await tx.skill.findFirst({ where: { id: c.skillId, workspaceId: run.workspaceId, status: c.from, pinned: false, bundled: false } });
          if (!skill) throw new Moved();
          const to = c.action === "stale" ? "stale" : c.action === "archive" ? "archived" : "active";
          must((await tx.skill.updateMany({ where: { id: skill.id, status: c.from, pinned: false }, data: { status: to } })).count);
          await rev(tx, "skill", skill.id, c.action, c.action === "archive" ? skill.content : null, null, c.reason);
          return;
        }
        case "skill_merge":
          return mergeSkills(tx, c, run, rev);
        case "lesson_archive":
          must((await tx.memoryEntry.updateMany({ where: { id: c.entryId, workspaceId: run.workspaceId, status: "active", kind: "lesson", text: c.text }, data: { status: "archived" } })).count);
          await rev(tx, "memory", c.entryId, "archive", c.text, null, c.reason);
          return;
        case "memory_merge": {
          const ids = [c.keepId, ...c.absorbed.map((a) => a.id)];
          // A merged text that says again what a person had forgotten is not written (db/tombstones.ts).
          if (await forgottenAmong(tx, run.workspaceId, [c.text])) throw new Moved();
          must(
            (await tx.memoryEntry.updateMany({ where: { id: c.keepId, workspaceId: run.workspaceId, status: "active", text: c.keepText, flag: null }, data: { text: c.text, scannedWith: RULES_VERSION } })).count,
          );
          await rev(tx, "memory", c.keepId, "merge", c.keepText, c.text, `${c.reason} (${ids.join(", ")})`);
          for (const a of c.absorbed) {
            must((await tx.memoryEntry.updateMany({ where: { id: a.id, workspaceId: run.workspaceId, status: "active", text: a.text, flag: null }, data: { status: "archived" } })).count);
            await rev(tx, "memory", a.id, "archive", a.text, null, `absorbed_into ${c.keepId}`);
          }
          return;
        }
        case "memory_flag":
          must((await tx.memoryEntry.updateMany({ where: { id: c.entryId, workspaceId: run.workspaceId, status: "active", text: c.text, flag: null }, data: { flag: c.flag } })).count);
          await rev(tx, "memory", c.entryId, "flag", null, null, c.flag);
          return;
      }
    });
    return true;
  } catch (err) {
    if (err instanceof Moved) return false;
    throw err;
  }
}

type Rev = (tx: Tx, entityType: "skill" | "memory", entityId: string, action: string, oldText: string | null, newText: string | null, reason: string) => Promise<unknown>;

async function mergeSkills(tx: Tx, c: Extract<Change, { type: "skill_merge" }>, run: Stamp, rev: Rev): Promise<void> {
  const live = { in: LIVE_STATUSES };
  const parts = await tx.skill.findMany({ where: { id: { in: c.absorbed.map((a) => a.id) }, workspaceId: run.workspaceId, status: live, pinned: false } });
  if (parts.length !== c.absorbed.length || c.absorbed.some((a) => parts.find((p) => p.id === a.id)?.contentHash !== a.contentHash)) throw new Moved();
  const names = [...c.absorbed.map((a) => a.name), ...(c.existingId ? [c.into] : [])].join(", ");
  const reason = `merged ${names} into ${c.into}`;
  if (c.existingId) {
    const cur = await tx.skill.findFirst({ where: { id: c.existingId, workspaceId: run.workspaceId, status: live, pinned: false, contentHash: c.existingHash ?? "" } });
    if (!cur) throw new Moved();
    must(
      (
        await tx.skill.updateMany({
          where: { id: cur.id, contentHash: cur.contentHash, pinned: false },
          data: { content: c.content, description: c.description, descriptionChecked: checkedMark(c.description), contentHash: hashOf(c.content, []), status: "active" },
        })
      ).count,
    );
    await rev(tx, "skill", cur.id, "merge", cur.content, c.content, reason);
  } else {
    if (await tx.skill.findFirst({ where: { name: c.into, OR: [{ workspaceId: run.workspaceId }, { bundled: true }] } })) throw new Moved();
    const lastUsed = Math.max(0, ...parts.map((p) => p.lastUsedAt?.getTime() ?? 0));
    const created = await tx.skill.create({
      data: {
        workspaceId: run.workspaceId,
        scope: c.placement.scope,
        ownerId: c.placement.ownerId,
        channelKey: c.placement.channelKey,
        name: c.into,
        description: c.description,
        descriptionChecked: checkedMark(c.description),
        content: c.content,
        contentHash: hashOf(c.content, []),
        source: "curator",
        useCount: parts.reduce((n, p) => n + p.useCount, 0),
        successCount: parts.reduce((n, p) => n + p.successCount, 0),
        lastUsedAt: lastUsed ? new Date(lastUsed) : null,
        createdAt: run.at,
      },
    });
    await rev(tx, "skill", created.id, "create", null, c.content, reason);
  }
  for (const p of parts) {
    must((await tx.skill.updateMany({ where: { id: p.id, status: p.status, contentHash: p.contentHash, pinned: false }, data: { status: "archived" } })).count);
    await rev(tx, "skill", p.id, "archive", p.content, null, `absorbed_into ${c.into}`);
  }
}
