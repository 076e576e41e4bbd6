/**
 * Team skills improve by proposal: a review's edit of a team skill (patch the skill, the umbrella
 * skill, or a support file) is kept as a proposal (src/skills/proposal-store.ts), posted with its
 * diff where the conversation was, and applied by a teammate: ✅ on the post, `/cairn approve <id>`
 * or the Approve button; `/cairn reject <id>` drops it. A turn's proposals (tools/skill-reach.ts:
 * a change to a team skill, a skill asked for the team and kept in the channel, one the safety
 * screen held) are judged the same way, the ✅ on cairn's reply to the message that asked.
 *
 * Rules, as for team rules (approvals.ts): the proposer (the person whose conversation was
 * reviewed) does not judge their own proposal; an admin's judgement counts, their own included.
 * One approval applies it, with a revision naming who approved (`/cairn rollback` undoes it). A
 * skill whose text moved since the proposal was made is never overwritten: the proposal is stale.
 */
import { isAdmin } from "../admission/access.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import { errText, type Logger } from "../ground/log.ts";
import type { WorkspaceScope } from "../ground/types.ts";
import type { Provenance } from "../memory/store.ts";
import type { SkillProposal } from "../skills/proposal-store.ts";
import { diffCounts, lineDiff } from "../skills/diff.ts";
import { nameOf, postIn, type ReplyPlace } from "./places.ts";
import { workspaceOfPlace, type Person } from "./reply-place-store.ts";
import type { LearningContext } from "./context.ts";

export type SkillJudgement =
  | { kind: "closed"; status: string }
  | { kind: "own" }
  | { kind: "applied"; revisionId: string }
  | { kind: "rejected" }
  | { kind: "stale"; why: string };

/** Which text of the skill a proposal changes. */
export const proposalTarget = (p: Pick<SkillProposal, "path" | "oldText">): string => (p.path === null ? "SKILL.md" : p.oldText === null ? `a new file ${p.path}` : p.path);

/** Who a skill proposed for a scope would be for. */
const forWhom = (toScope: string): string => (toScope === "team" ? "the whole team" : toScope === "channel" ? "its channel" : "its author");

/** One line about a proposal: the skill, the text, the size of the change, why. */
export function proposalSummary(p: SkillProposal): string {
  const { added, removed } = diffCounts(p.oldText, p.newText);
  if (p.toScope !== null) return `New skill \`${p.name}\` for ${forWhom(p.toScope)} (+${added} lines): ${p.reason}`;
  return `Change to team skill \`${p.name}\` (${proposalTarget(p)}, +${added} −${removed} lines): ${p.reason}`;
}

/** The post people judge a proposal by: what, why, the diff, and how to approve or reject it. */
export function proposalPost(p: SkillProposal, proposer: string): string {
  // A fence inside the diff would end it early: shown with look-alike quotes.
  const diff = lineDiff(p.oldText, p.newText).map((l) => l.replaceAll("```", "'''"));
  return [
    `**Proposed change to team skill \`${p.name}\`** (${proposalTarget(p)}), from reviewing this conversation with ${proposer}. Not applied yet.`,
    `Why: ${p.reason}`,
    "```diff",
    ...diff,
    "```",
    `React ✅ to apply it (anyone but ${proposer}), or \`/cairn approve ${p.id}\`; \`/cairn reject ${p.id}\` drops it.`,
  ].join("\n");
}

/** Posts each proposal a review made where the conversation was, and records the post (a ✅ on it applies it). Best effort. */
export async function postProposals(ctx: LearningContext, place: Pick<ReplyPlace, "workspace" | "conversation">, proposals: readonly SkillProposal[], proposer: string, log: Logger): Promise<void> {
  for (const p of proposals) {
    try {
      const posted = await postIn(ctx, place, proposalPost(p, proposer));
      if (posted !== null) await ctx.skillProposals.posted(p, posted);
    } catch (err) {
      // It stays pending either way: listed in the team view, approvable by id.
      log.warn({ err: errText(err), proposal: p.id }, "could not post a skill proposal");
    }
  }
}

/** An approval or rejection of a proposal by `judge`, with the rules above. */
export async function judgeSkillProposal(
  ctx: LearningContext,
  scope: WorkspaceScope,
  p: SkillProposal,
  judge: Person,
  verdict: "approve" | "reject",
  via: Pick<Provenance, "source" | "sourceMessageId">,
): Promise<SkillJudgement> {
  if (p.status !== "pending") return { kind: "closed", status: p.status };
  const admin = isAdmin(ctx.settings.access, await ctx.places.platformOf(scope), judge.externalId);
  if (!admin && p.proposedById === judge.id) {
    ctx.log.info({ proposal: p.id, verdict }, "the proposer's own judgement of a skill proposal does not count");
    return { kind: "own" };
  }
  if (verdict === "reject") return (await ctx.skillProposals.reject(p, judge.id)) ? { kind: "rejected" } : { kind: "closed", status: "decided" };
  const who = `${nameOf(judge)}${admin ? " (an admin)" : ""}`;
  const outcome = await ctx.skillProposals.apply(p, { ...via, actorId: judge.id, reason: `proposal ${p.id} approved by ${who}: ${p.reason}`, at: ctx.now() });
  ctx.log.info({ proposal: p.id, skill: p.skillId, outcome: outcome.kind }, "skill proposal judged");
  return outcome;
}

/** Tells the proposal's conversation what became of it. */
export async function announceSkill(ctx: LearningContext, place: Pick<ReplyPlace, "workspace" | "conversation">, j: SkillJudgement, by: Person, p: SkillProposal): Promise<void> {
  const text = skillOutcome(j, nameOf(by), p);
  if (text) await postIn(ctx, place, text);
}

/** What the conversation is told; null when nothing changed (a closed proposal, the proposer's own judgement). */
export function skillOutcome(j: SkillJudgement, by: string, p: SkillProposal): string | null {
  switch (j.kind) {
    case "applied":
      if (p.toScope !== null) return `✅ Approved by ${by}: skill \`${p.name}\` is for ${p.toScope === "team" ? "the whole workspace" : "this channel"} now (in the skills index from each person's next session).`;
      return `✅ Approved by ${by}: team skill \`${p.name}\` (${proposalTarget(p)}) now reads as proposed. Revision ${j.revisionId}; \`/cairn rollback ${j.revisionId}\` undoes it (admins).`;
    case "rejected":
      if (p.toScope !== null) return `Rejected by ${by}: skill \`${p.name}\` is not shared${p.toScope === "team" ? " with the whole workspace" : ""}.`;
      return `Rejected by ${by}: the proposed change to team skill \`${p.name}\` is dropped.`;
    case "stale":
      return `Not applied: ${j.why}, so this proposal no longer fits it and is closed. Nothing was changed.`;
    default:
      return null;
  }
}

/**
 * ✅ on a message: true when the message was a skill proposal's post, or cairn's reply to a message
 * whose turn proposed skills (whatever came of it).
 */
export async function approveSkillProposal(ctx: LearningContext, place: ReplyPlace, reactorId: string): Promise<boolean> {
  const scope = workspaceOfPlace(place);
  const posted = await ctx.skillProposals.postedAs(scope, place.reply.id);
  const proposals = posted ? [posted] : place.question ? await ctx.skillProposals.fromMessage(scope, place.question.id) : [];
  if (proposals.length === 0) return false;
  const reactor = await ctx.places.person(scope, reactorId);
  if (!reactor) return true;
  for (const proposal of proposals) {
    const judgement = await judgeSkillProposal(ctx, scope, proposal, reactor, "approve", { source: "reaction", sourceMessageId: place.reply.id });
    await announceSkill(ctx, place, judgement, reactor, proposal);
  }
  return true;
}

/** `/cairn approve|reject <id>` for a skill proposal of this workspace, announced where it was posted; null when none has the id. */
export async function judgeSkillById(ctx: LearningContext, place: Place, verdict: "approve" | "reject", id: string): Promise<{ proposal: SkillProposal; judgement: SkillJudgement } | null> {
  const scope = workspaceScopeOf(place);
  const proposal = await ctx.skillProposals.find(scope, id);
  if (!proposal) return null;
  const judgement = await judgeSkillProposal(ctx, scope, proposal, place.person, verdict, { source: "tool", sourceMessageId: null });
  // Where it was posted (a review's proposal), or else where it was asked for (a turn's): that place sees what became of it.
  const where =
    proposal.proposalMessageId !== null ? await ctx.places.replyPlace(scope, proposal.proposalMessageId) : proposal.sourceMessageId !== null ? await ctx.places.saidIn(scope, proposal.sourceMessageId) : null;
  // The judgement stands whether or not the place can be told.
  if (where) await announceSkill(ctx, where, judgement, place.person, proposal).catch((err: unknown) => ctx.log.warn({ err: errText(err), proposal: proposal.id }, "could not announce a skill proposal's outcome"));
  return { proposal, judgement };
}
