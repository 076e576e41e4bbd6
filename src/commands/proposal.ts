/**
 * `/cairn approve <id>` and `/cairn reject <id>`: a proposal judged by id, with the same rules as ✅
 * on its post: a proposed team rule (learning/approvals.ts), a change to a team skill or a skill
 * proposed for the team (learning/skill-proposals.ts), or something a person asked cairn to remember for the team, kept
 * where it was said until a teammate shares it (learning/shares.ts). The outcome is also posted where the proposal was, so the channel
 * that saw it sees what became of it.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { Place } from "../history/store/store.ts";
import type { Judged, Learning } from "../learning/learning.ts";
import { shortId } from "../ground/short-id.ts";

/** What approve and reject need: the learning loop, which judges a proposal as ✅ does. */
export interface ProposalDeps {
  learning: Pick<Learning, "judgeProposal">;
}

export async function proposalCommand(deps: ProposalDeps, place: Place, verdict: "approve" | "reject", id: string | undefined): Promise<CommandReply> {
  if (!id) return { text: `Usage: \`${verdict} <id>\` (the ids of proposals waiting are in \`lessons\`, \`team\` and on the Home tab).`, ephemeral: true };
  const judged = await deps.learning.judgeProposal(place, verdict, id);
  if (!judged) return { text: `No proposal of this workspace has the id ${id}.`, ephemeral: true };
  if (judged.of === "fact") return factAnswer(judged, verdict);
  return judged.of === "skill" ? skillAnswer(judged, verdict) : ruleAnswer(judged, verdict);
}

const own = (verdict: "approve" | "reject"): CommandReply => ({
  text: `You proposed it, so your ${verdict === "approve" ? "approval" : "rejection"} does not count: someone else (or a cairn admin) decides.`,
  ephemeral: true,
  outcome: "refused",
});

function ruleAnswer({ entry, judgement }: Extract<Judged, { of: "rule" }>, verdict: "approve" | "reject"): CommandReply {
  switch (judgement.kind) {
    case "closed":
      return { text: "That proposal is no longer waiting: it was already approved, rejected or archived.", ephemeral: true, outcome: "not_found" };
    case "own":
      return own(verdict);
    case "counted":
      return { text: `Your approval is counted (${judgement.approvals} of ${judgement.needed} needed).`, ephemeral: true, outcome: "done" };
    case "approved":
      return { text: `Approved. Team rule from now on: **${judgement.rule.text}**`, ephemeral: true, outcome: "done" };
    case "rejected":
      return { text: entry.kind === "rule" ? "Rejected: the team rule in force stays as it is." : "Rejected: it stays a lesson of its channel, no longer proposed.", ephemeral: true, outcome: "done" };
    case "refused":
      return { text: `I could not make this a team rule: ${judgement.reason}.`, ephemeral: true, outcome: "refused" };
  }
}

function skillAnswer({ proposal, judgement }: Extract<Judged, { of: "skill" }>, verdict: "approve" | "reject"): CommandReply {
  const skill = `team skill \`${proposal.name}\``;
  // A skill proposed for a scope (kept where it was made, or held by the safety screen): moved there, or not.
  if (proposal.toScope !== null && judgement.kind === "applied") {
    return { text: `Approved: skill \`${proposal.name}\` is for ${proposal.toScope === "team" ? "the whole workspace" : "its channel"} now (from each person's next session).`, ephemeral: true, outcome: "done" };
  }
  if (proposal.toScope !== null && judgement.kind === "rejected") return { text: `Rejected: skill \`${proposal.name}\` is not shared.`, ephemeral: true, outcome: "done" };
  switch (judgement.kind) {
    case "closed":
      return { text: `That proposal is no longer waiting: it was already ${judgement.status === "pending" ? "decided" : judgement.status}.`, ephemeral: true, outcome: "not_found" };
    case "own":
      return own(verdict);
    case "applied":
      return { text: `Approved: ${skill} now reads as proposed. Revision ${shortId(judgement.revisionId)}; \`rollback ${shortId(judgement.revisionId)}\` undoes it (admins).`, ephemeral: true, outcome: "done" };
    case "rejected":
      return { text: `Rejected: ${skill} stays as it is.`, ephemeral: true, outcome: "done" };
    case "stale":
      return { text: `Not applied: ${judgement.why}, so the proposal no longer fits it and is closed. Nothing was changed.`, ephemeral: true, outcome: "refused" };
  }
}

function factAnswer({ entry, judgement }: Extract<Judged, { of: "fact" }>, verdict: "approve" | "reject"): CommandReply {
  switch (judgement.kind) {
    case "closed":
      return { text: "That proposal is no longer waiting: it was already shared, kept where it was said, or removed.", ephemeral: true, outcome: "not_found" };
    case "own":
      return { ...own(verdict), text: `You taught it, so your ${verdict === "approve" ? "approval" : "rejection"} does not count: a teammate (or a cairn admin) decides whether the whole workspace gets it.` };
    case "shared":
      return { text: `Shared with the whole workspace (from each person's next session): **${judgement.entry.text}**`, ephemeral: true, outcome: "done" };
    case "rejected":
      return { text: `Rejected: it stays only where it was said. **${entry.text}**`, ephemeral: true, outcome: "done" };
    case "stale":
      return { text: "Not shared: the team entry it would replace was changed or removed since. Nothing was changed.", ephemeral: true, outcome: "refused" };
    case "refused":
      return { text: `I could not share this with the whole workspace: ${judgement.reason}.`, ephemeral: true, outcome: "refused" };
  }
}
