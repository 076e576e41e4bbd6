/**
 * Who sees which skill: bundled ones everyone, a workspace's team skills its members, a channel's
 * skills that channel, a person's own skills that person. One rule, written twice on purpose: as a
 * WHERE clause for the store's queries and as a predicate for the cached index (the skill-store
 * suite checks that the two agree for every kind of skill and of scope).
 */
import type { Scope } from "../ground/scope.ts";
import type { Skill } from "./store.ts";

/** Which skills a scope may see: bundled ones, and this workspace's team, channel and own skills. */
export function visibleWhere(scope: Scope) {
  const mine: object[] = [{ scope: "team" }, { scope: "user", ownerId: scope.personId }];
  if (!scope.isDm) mine.push({ scope: "channel", channelKey: scope.channelKey });
  return { OR: [{ bundled: true }, { workspaceId: scope.workspaceId, OR: mine }] };
}

/**
 * `visibleWhere` as a predicate, for the cached index. The two must agree; the skill-store suite
 * checks that they do for every kind of skill and of scope.
 */
export function isVisible(scope: Scope, skill: Pick<Skill, "bundled" | "workspaceId" | "scope" | "ownerId" | "channelKey">): boolean {
  if (skill.bundled) return true;
  if (skill.workspaceId !== scope.workspaceId) return false;
  if (skill.scope === "team") return true;
  if (skill.scope === "user") return skill.ownerId === scope.personId;
  return skill.scope === "channel" && !scope.isDm && skill.channelKey === scope.channelKey;
}

/** A person's own skill: only they see it, so it never goes where others' prompts read it. */
export function isPrivateSkill(skill: Pick<Skill, "bundled" | "scope">): boolean {
  return !skill.bundled && skill.scope === "user";
}

/** What the skills index of a prompt shows of a skill, and what decides who sees it. */
/** A skill as a prompt's index lists it, with who made it and when (the prompt names its teacher). */
export type SkillIndexEntry = Pick<Skill, "name" | "description" | "status" | "bundled" | "workspaceId" | "scope" | "ownerId" | "channelKey" | "createdById" | "createdAt" | "source" | "verifiedAt" | "descriptionChecked">;

/** The statuses of a usable skill: active, or stale (unused lately, src/curator). Archived ones are not. */
export const LIVE_STATUSES = ["active", "stale"];


