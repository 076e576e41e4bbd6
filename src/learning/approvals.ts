/**
 * Approving or rejecting a proposed team rule: a channel lesson (promoted once approved) or a rule
 * waiting because it would replace an older one. One judgement for every way in: ✅ on the proposal
 * post, `/cairn approve|reject <id>`, and the Approve / Reject buttons of the views (which run the
 * commands).
 *
 * Rules: the proposer's own judgement does not count (an admin's does, and counts for all);
 * `ruleApprovals` distinct people are needed to approve. A rejection is final for the proposal: a
 * pending rule is archived; a channel lesson stays a lesson of its channel, no longer proposed.
 * Every step is a revision with who did it.
 */
import { isAdmin } from "../admission/access.ts";
import { scopeOfEntry, type MemoryEntry, type Person, type Provenance } from "../lessons/lesson-store.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import { nameOf, postIn, type ReplyPlace } from "./places.ts";
import { workspaceOfPlace } from "./reply-place-store.ts";
import type { LearningContext } from "./context.ts";
import { MemoryError } from "../memory/store.ts";

export const RULE_IN_FORCE = (by: string, rule: string) => `✅ Approved by ${by}. Team rule from now on, for everyone in this workspace (from each person's next session): **${rule}**`;
export const PROPOSAL_REJECTED = (by: string, entry: Pick<MemoryEntry, "kind" | "text">) =>
  entry.kind === "rule" ? `Rejected by ${by}: the proposed team rule will not replace the one in force. **${entry.text}**` : `Rejected by ${by} as a team rule: it stays a lesson of this channel. **${entry.text}**`;

export type Judgement =
  | { kind: "closed" }
  | { kind: "own" }
  | { kind: "counted"; approvals: number; needed: number }
  | { kind: "approved"; rule: MemoryEntry }
  | { kind: "rejected" }
  | { kind: "refused"; reason: string };

/** A proposal still open: a channel lesson proposed as a rule, or a rule waiting to replace another. */
export function isOpenProposal(e: Pick<MemoryEntry, "kind" | "scope" | "status" | "proposalMessageId">): boolean {
  return (e.kind === "lesson" && e.scope === "channel" && e.status === "active" && e.proposalMessageId !== null) || (e.kind === "rule" && e.status === "pending");
}

/** `judge`'s approval or rejection of an open proposal, written in one transaction. */
export async function judge(ctx: LearningContext, entry: MemoryEntry, judgeBy: Person, verdict: "approve" | "reject", prov: Omit<Provenance, "actorId" | "reason">): Promise<Judgement> {
  if (!isOpenProposal(entry)) return { kind: "closed" };
  const admin = isAdmin(ctx.settings.access, await ctx.places.platformOf(scopeOfEntry(entry)), judgeBy.externalId);
  if (!admin && entry.createdById === judgeBy.id) {
    ctx.log.info({ entry: entry.id, verdict }, "the proposer's own judgement does not count");
    return { kind: "own" };
  }
  const by: Provenance = { ...prov, actorId: judgeBy.id, reason: verdict === "reject" ? (admin ? "rejected by an admin" : "rejected") : admin ? "approved by an admin" : prov.source === "reaction" ? "approved with ✅" : "approved" };
  if (verdict === "reject") return reject(ctx, entry, by);
  const needed = ctx.settings.learning.ruleApprovals;
  try {
    const outcome = await ctx.lessons.approve(entry, by, { admin, needed, teamBudget: ctx.settings.budgets.team });
    if (outcome.kind === "counted") return { ...outcome, needed };
    if (outcome.kind === "approved") ctx.log.info({ rule: outcome.rule.id, from: entry.id }, "team rule approved");
    return outcome;
  } catch (err) {
    if (!(err instanceof MemoryError)) throw err;
    return { kind: "refused", reason: err.message };
  }
}

async function reject(ctx: LearningContext, entry: MemoryEntry, by: Provenance): Promise<Judgement> {
  if (!(await ctx.lessons.reject(entry, by))) return { kind: "closed" };
  ctx.log.info({ entry: entry.id, kind: entry.kind }, "proposal rejected");
  return { kind: "rejected" };
}

/** Tells the proposal's thread what became of it (the channel saw the proposal; it sees the outcome). */
export async function announce(ctx: LearningContext, place: Pick<ReplyPlace, "workspace" | "conversation">, judgement: Judgement, by: Person, entry: MemoryEntry): Promise<void> {
  if (judgement.kind === "approved") await postIn(ctx, place, RULE_IN_FORCE(nameOf(by), judgement.rule.text));
  else if (judgement.kind === "rejected") await postIn(ctx, place, PROPOSAL_REJECTED(nameOf(by), entry));
  else if (judgement.kind === "refused") await postIn(ctx, place, `I could not make this a team rule: ${judgement.reason}.`);
}

/** ✅ on a message: true when the message was a proposal (whatever came of the approval); false otherwise. */
export async function approveProposal(ctx: LearningContext, place: ReplyPlace, reactorId: string): Promise<boolean> {
  const scope = workspaceOfPlace(place);
  const entry = await ctx.lessons.proposedIn(scope, place.reply.id);
  if (!entry) return false;
  const reactor = await ctx.places.person(scope, reactorId);
  if (!reactor) return true;
  const judgement = await judge(ctx, entry, reactor, "approve", { source: "reaction", sourceMessageId: place.reply.id });
  await announce(ctx, place, judgement, reactor, entry);
  return true;
}

/** Where a proposal was posted, to announce its outcome there; null for one never posted. */
export async function proposalPlace(ctx: LearningContext, entry: MemoryEntry): Promise<ReplyPlace | null> {
  if (entry.proposalMessageId === null) return null;
  return ctx.places.replyPlace(scopeOfEntry(entry), entry.proposalMessageId);
}

/**
 * `/cairn approve|reject <id>`: this workspace's lesson or rule with that id judged, and the outcome
 * announced where it was proposed. Null when no lesson or rule of the workspace has the id.
 */
export async function judgeById(ctx: LearningContext, place: Place, verdict: "approve" | "reject", id: string): Promise<{ entry: MemoryEntry; judgement: Judgement } | null> {
  const entry = await ctx.lessons.find(workspaceScopeOf(place), id);
  if (!entry || (entry.kind !== "rule" && entry.kind !== "lesson")) return null;
  const judgement = await judge(ctx, entry, place.person, verdict, { source: "tool", sourceMessageId: null });
  const where = await proposalPlace(ctx, entry);
  if (where) await announce(ctx, where, judgement, place.person, entry);
  return { entry, judgement };
}
