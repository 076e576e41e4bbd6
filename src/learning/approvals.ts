/**
 * ✅ on a proposal post approves the proposed team rule: a channel lesson (promoted once approved)
 * or a rule waiting because it would replace an older one. The corrector's own ✅ does not count
 * (an admin's does, and counts for all); `ruleApprovals` distinct people are needed.
 */
import { isAdmin } from "../admission/access.ts";
import type { Platform } from "../core/types.ts";
import { activateRule, createRule, invalidate, recordApproval } from "./lesson-store.ts";
import { parseCase } from "./lesson-case.ts";
import { nameOf, postIn, type ReplyPlace } from "./places.ts";
import type { LearningContext } from "./context.ts";
import { MemoryError } from "../memory/store.ts";

export const RULE_IN_FORCE = (by: string, rule: string) => `✅ Approved by ${by}. Team rule from now on, for everyone in this workspace (from each person's next session): **${rule}**`;

/** True when the message was a proposal (whatever came of the approval); false otherwise. */
export async function approveProposal(ctx: LearningContext, place: ReplyPlace, reactorId: string): Promise<boolean> {
  const entry = await ctx.db.memoryEntry.findFirst({ where: { workspaceId: place.workspace.id, proposalMessageId: place.reply.id } });
  if (!entry) return false;
  const open = (entry.kind === "lesson" && entry.scope === "channel" && entry.status === "active") || (entry.kind === "rule" && entry.status === "pending");
  if (!open) return true;
  const reactor = await ctx.db.person.findFirst({ where: { id: reactorId, workspaceId: place.workspace.id } });
  if (!reactor) return true;
  const admin = isAdmin(ctx.settings.access, place.workspace.platform as Platform, reactor.externalId);
  if (!admin && entry.createdById === reactorId) {
    ctx.log.info({ entry: entry.id }, "the corrector's own approval does not count");
    return true;
  }
  const prov = { source: "reaction" as const, actorId: reactorId, sourceMessageId: place.reply.id, reason: admin ? "approved by an admin" : "approved with ✅" };
  let rule;
  try {
    rule = await ctx.db.$transaction(async (tx) => {
      const approvals = await recordApproval(tx, entry, prov);
      if (!admin && approvals < ctx.settings.learning.ruleApprovals) return null;
      if (entry.kind === "rule") {
        const from = parseCase(entry.origin)?.fromLessons ?? [];
        const lessons = from.length ? await tx.memoryEntry.findMany({ where: { id: { in: from }, workspaceId: entry.workspaceId } }) : [];
        return (await activateRule(tx, entry, lessons, prov)) ? entry : null;
      }
      const replaces = entry.replacesId ? await tx.memoryEntry.findFirst({ where: { id: entry.replacesId, workspaceId: entry.workspaceId, status: "active", kind: "rule" } }) : null;
      return createRule(tx, {
        workspaceId: entry.workspaceId,
        from: [entry],
        text: entry.text,
        quote: entry.quote,
        origin: entry.origin,
        replaces,
        pending: false,
        teamBudget: ctx.settings.budgets.team,
        prov,
      });
    });
  } catch (err) {
    if (!(err instanceof MemoryError)) throw err;
    await postIn(ctx, place, `I could not make this a team rule: ${err.message}.`);
    return true;
  }
  if (!rule) return true;
  invalidate(ctx.memory);
  ctx.log.info({ rule: rule.id, from: entry.id }, "team rule approved");
  await postIn(ctx, place, RULE_IN_FORCE(nameOf(reactor), rule.text));
  return true;
}

