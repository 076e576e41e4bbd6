/**
 * The WHERE clauses memory is read through: what a scope may see of each target, and which pending
 * entries wait for a person. The only way entries are found, so a person's `user` entries reach only
 * that person, `channel` entries only that channel, and nothing crosses workspaces.
 * `visibleWhere` has a twin in SQL for the read below Prisma (visible-store.ts); a test compares them.
 */
import type { MemoryTarget, PersonScope, Scope } from "../ground/types.ts";
import { TARGETS } from "./entries.ts";

/** The rows a scope may see for one target. Channel memory does not exist in a DM. */
export function targetWhere(scope: Scope, target: MemoryTarget) {
  const base = { workspaceId: scope.workspaceId, status: "active" } as const;
  switch (target) {
    case "user":
      return { ...base, scope: "user", ownerId: scope.personId };
    case "channel":
      // No channel memory in a DM: an empty id list matches nothing (PostgreSQL text cannot hold a NUL sentinel).
      if (scope.isDm) return { ...base, scope: "channel", id: { in: [] as string[] } };
      return { ...base, scope: "channel", channelKey: scope.channelKey };
    case "team":
      return { ...base, scope: "team" };
  }
}

/**
 * The entries a person proposed and has not confirmed yet: team entries said in a DM, and what a
 * review of their conversation held for them (team entries, changes to what a person wrote).
 */
export function pendingWhere(scope: PersonScope) {
  return { workspaceId: scope.workspaceId, status: "pending", createdById: scope.personId };
}

/**
 * Pending entries the person may confirm alone. A pending team rule is not one of them: it waits
 * for other people's approval (src/learning/approvals.ts), even when it came from this person's lesson.
 */
export function confirmableWhere(scope: PersonScope) {
  return { ...pendingWhere(scope), kind: { not: "rule" } };
}

/** Everything active that a prompt in this place may draw on: team, channel (not in a DM), the person's own. */
export function visibleWhere(scope: Scope) {
  const targets = TARGETS.filter((t) => !(t === "channel" && scope.isDm));
  return { OR: targets.map((t) => targetWhere(scope, t)) };
}

/** What a place may read of memory's history: the same targets as `visibleWhere`, their superseded rows. */
export function supersededWhere(scope: Scope) {
  const targets = TARGETS.filter((t) => !(t === "channel" && scope.isDm));
  return { OR: targets.map((t) => ({ ...targetWhere(scope, t), status: "superseded" })) };
}
