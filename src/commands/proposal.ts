/**
 * `/cairn approve <id>` and `/cairn reject <id>`: a proposed team rule judged by id, with the same
 * rules as ✅ on its proposal post (learning/approvals.ts). The outcome is also posted where the proposal was,
 * so the channel that saw it sees what became of it.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { Place } from "../history/store/store.ts";
import type { Learning } from "../learning/learning.ts";

/** What approve and reject need: the learning loop, which judges a proposal as ✅ does. */
export interface ProposalDeps {
  learning: Pick<Learning, "judgeProposal">;
}

export async function proposalCommand(deps: ProposalDeps, place: Place, verdict: "approve" | "reject", id: string | undefined): Promise<CommandReply> {
  if (!id) return { text: `Usage: \`${verdict} <id>\` (the ids of proposals waiting are in \`lessons\` and on the Home tab).`, ephemeral: true };
  const judged = await deps.learning.judgeProposal(place, verdict, id);
  if (!judged) return { text: `No proposal of this workspace has the id ${id}.`, ephemeral: true };
  const { entry, judgement } = judged;
  switch (judgement.kind) {
    case "closed":
      return { text: "That proposal is no longer waiting: it was already approved, rejected or archived.", ephemeral: true, outcome: "not_found" };
    case "own":
      return { text: `You proposed it, so your ${verdict === "approve" ? "approval" : "rejection"} does not count: someone else (or a cairn admin) decides.`, ephemeral: true, outcome: "refused" };
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
