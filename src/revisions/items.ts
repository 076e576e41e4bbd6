/**
 * The skill or memory entry a history or rollback command is about, found within what the asker
 * may see: the same visibility as every read (scope in the query's result check, not the prompt).
 * A pending entry is seen only by the person who proposed it; a private item only by its owner.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Skill } from "../db/generated/sqlite/client.ts";
import type { Scope } from "../ground/types.ts";
import { isVisible } from "../skills/store.ts";

export type Item = { type: "skill"; row: Skill } | { type: "memory"; row: MemoryEntry };

export function entryVisible(scope: Scope, e: Pick<MemoryEntry, "workspaceId" | "scope" | "ownerId" | "channelKey" | "status" | "createdById">): boolean {
  if (e.workspaceId !== scope.workspaceId) return false;
  if (e.status === "pending") return e.createdById === scope.personId;
  if (e.scope === "team") return true;
  if (e.scope === "channel") return !scope.isDm && e.channelKey === scope.channelKey;
  return e.scope === "user" && e.ownerId === scope.personId;
}

export function itemVisible(scope: Scope, item: Item): boolean {
  return item.type === "skill" ? isVisible(scope, item.row) : entryVisible(scope, item.row);
}

/** A private item (a person's own skill or profile entry) and its owner. */
export function ownerOf(item: Item): string | null {
  if (item.type === "skill") return !item.row.bundled && item.row.scope === "user" ? item.row.ownerId : null;
  return item.row.scope === "user" ? item.row.ownerId : null;
}

/** A skill by name (a workspace skill shadows a bundled one) or an entry by id; any status. */
export async function findItem(db: Db, workspaceId: string, ref: string): Promise<Item | null> {
  const entry = await db.memoryEntry.findFirst({ where: { id: ref, workspaceId } });
  if (entry) return { type: "memory", row: entry };
  const skills = await db.skill.findMany({ where: { OR: [{ name: ref }, { id: ref }], AND: [{ OR: [{ workspaceId }, { bundled: true }] }] } });
  const skill = skills.find((s) => !s.bundled) ?? skills[0];
  return skill ? { type: "skill", row: skill } : null;
}

/** The item a revision is about, in this workspace. */
export async function itemOf(db: Db, workspaceId: string, rev: { entityType: string; entityId: string }): Promise<Item | null> {
  if (rev.entityType === "memory") {
    const row = await db.memoryEntry.findFirst({ where: { id: rev.entityId, workspaceId } });
    return row ? { type: "memory", row } : null;
  }
  const row = await db.skill.findFirst({ where: { id: rev.entityId, workspaceId } });
  return row ? { type: "skill", row } : null;
}
