/**
 * Whether the asker may see the skill or memory entry a history or rollback command is about (the
 * revision store finds it): the same visibility as every read (scope in the query's result check,
 * not the prompt). A pending entry is seen only by the person who proposed it; a private item only
 * by its owner.
 */
import type { Scope } from "../ground/types.ts";
import { isVisible } from "../skills/visibility.ts";
import type { MemoryEntry } from "../memory/store.ts";
import type { Item } from "./revision-store.ts";

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
