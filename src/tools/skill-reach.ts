/**
 * The reach of a skill written in a conversation (issue 26, as memory/reach.ts for memory): a team
 * skill is in the skills index of every prompt of the workspace, so without a second person a
 * write reaches only the audience that already saw it.
 * - A team skill created by someone not trusted to share alone (admission/trust.ts, asked through
 *   `reachOf`) is kept where it was said (this channel; in a DM the person's own) and proposed for
 *   the team; a teammate's ✅ on cairn's reply or `/cairn approve <id>` moves it there.
 * - Their edit, patch or write_file of a team skill is a proposal, exactly as a review's
 *   (skills/proposal-store.ts, learning/skill-proposals.ts).
 * - Every channel or team create, edit, patch and write_file passes the model-judged screen first
 *   (safety/screen.ts): a block refuses it with the reason; a hold keeps it off every index (a new
 *   skill stored "held", a change kept as a proposal) until a teammate approves it.
 * A person's own skills, and trusted writers' changes the screen allows, are written at once.
 */
import type { MemoryTarget, Scope } from "../ground/types.ts";
import { hereOf, type ReachOf } from "../memory/reach.ts";
import type { Provenance } from "../memory/store.ts";
import type { WriteScreen } from "../safety/screen.ts";
import { cleanOrThrow, parseOrThrow, SkillError, textChange, type TextEdit } from "../skills/change.ts";
import type { SkillProposal, SkillProposalStore } from "../skills/proposal-store.ts";
import type { Skill, SkillStore } from "../skills/store.ts";

/** What decides where a skill written in a conversation goes. */
export interface SkillReach {
  /** How far this person's team writes reach alone. */
  reachOf: ReachOf;
  proposals: Pick<SkillProposalStore, "propose">;
  screen: WriteScreen;
}

/** What a write came to: the model's result text, and the proposal it made, if any. */
export interface SkillWriteResult {
  skill: string;
  text: string;
  proposal: SkillProposal | null;
}

const SEEN_BY: Record<MemoryTarget, string> = {
  team: "everyone in the workspace (a skill in every prompt's skills index)",
  channel: "everyone in this channel (a skill in its skills index)",
  user: "the person only",
};

/** The screen's verdict on a shared skill text: null to write it, the reason to hold it; a block throws. */
async function screened(screen: WriteScreen, scope: Scope, text: string, target: MemoryTarget): Promise<string | null> {
  const v = await screen.judge({ workspaceId: scope.workspaceId, text, reach: SEEN_BY[target] });
  if (v.verdict === "allow") return null;
  if (v.verdict === "block") throw new SkillError(`Blocked by the safety screen: ${v.reason}. Nothing was saved. Skills hold procedures for the team, not instructions about how to treat people.`);
  return v.reason;
}

/** Who sees a skill kept at `target`. */
const where = (scope: Scope, target: MemoryTarget): string =>
  target === "team" ? "the whole workspace" : target === "channel" ? `this channel only (<#${scope.channelKey}>)` : "the person only (private to them)";

/** How a teammate approves, said so the model can pass it on. */
const approveHow = (scope: Scope, id: string): string =>
  scope.isDm ? `A teammate's approval (/cairn approve ${id}, or Approve in the team view)` : `A ✅ from a teammate on your reply (or /cairn approve ${id})`;

export async function createSkill(store: SkillStore, reach: SkillReach | null, scope: Scope, raw: string, target: MemoryTarget, prov: Provenance): Promise<SkillWriteResult> {
  const made = (s: Skill): SkillWriteResult => ({ skill: s.name, proposal: null, text: `Created skill '${s.name}' (${s.scope}): for ${where(scope, s.scope as MemoryTarget)}, in the skills index from the next session.` });
  // A private skill is the person's alone; a channel skill from a DM is refused by the store.
  if (!reach || target === "user" || (target === "channel" && scope.isDm)) return made(await store.create(scope, raw, target, prov));
  // The patterns first (a block there is the store's to report); the screen reads the redacted text.
  const text = cleanOrThrow(raw, "SKILL.md");
  parseOrThrow(text);
  const held = await screened(reach.screen, scope, text, target);
  const alone = target !== "team" || (await reach.reachOf(scope)) === "workspace";
  if (held === null && alone) return made(await store.create(scope, raw, target, prov));
  const reason = prov.reason ?? "made in a conversation";
  const { skill, proposal } = await store.createProposed(scope, raw, held === null ? hereOf(scope) : target, { toScope: target, held: held !== null, reason }, prov);
  const id = proposal.id;
  if (held !== null) {
    return { skill: skill.name, proposal, text: `HELD, NOT SAVED FOR ANYONE YET: skill '${skill.name}' (proposal ${id}) was held by the safety screen (${held}). It is in no one's skills index until a teammate approves it (${approveHow(scope, id).replace(/^A /, "a ")}); then it is for ${where(scope, target)}. Tell the person plainly why it was held and what releases it.` };
  }
  const here = scope.isDm ? "THE PERSON ONLY" : "THIS CHANNEL ONLY";
  const how = `${approveHow(scope, id)} makes it the whole workspace's.`;
  return {
    skill: skill.name,
    proposal,
    text: `SAVED FOR ${here}, NOT THE WHOLE TEAM: skill '${skill.name}' is for ${where(scope, hereOf(scope))}, in the skills index there from the next session, and proposed for the team (proposal ${id}). ${how} Tell them so plainly, e.g. "Saved for ${scope.isDm ? "you" : "this channel"}. ${how}"`,
  };
}

/**
 * An edit, patch or write_file of a shared skill that is not written at once: kept as a proposal
 * (held by the screen, or a team skill's change by someone not trusted to share alone); null when
 * the store should write it as asked (a private skill, a trusted writer, no reach given).
 */
export async function proposedChange(store: SkillStore, reach: SkillReach | null, scope: Scope, name: string, edit: TextEdit, prov: Provenance): Promise<SkillWriteResult | null> {
  if (!reach) return null;
  const skill = await store.find(scope, name);
  // Missing or bundled: the store says so; a private skill is the person's to change.
  if (!skill || skill.bundled || skill.scope === "user") return null;
  const target = skill.scope as MemoryTarget;
  // Checked as the store would check it: a refusal goes back to the model to fix.
  const change = textChange(skill, edit);
  const held = await screened(reach.screen, scope, change.newText, target);
  if (held === null && (target !== "team" || (await reach.reachOf(scope)) === "workspace")) return null;
  const proposal = await reach.proposals.propose(scope, skill, change, prov.reason ?? "changed in a conversation", prov.sourceMessageId);
  const what = `your change to ${change.path ?? "SKILL.md"} of '${skill.name}'`;
  const how = `${approveHow(scope, proposal.id)} applies it.`;
  const text =
    held !== null
      ? `HELD, NOT APPLIED: the safety screen held ${what} (${held}); it is kept as proposal ${proposal.id}, in no one's skills until a teammate approves it. ${how} Tell the person plainly why it was held.`
      : `PROPOSED, NOT APPLIED: '${skill.name}' is a team skill (everyone's), so ${what} is kept as proposal ${proposal.id} until a teammate approves it. ${how} Do not retry it another way; tell the person so plainly.`;
  return { skill: skill.name, proposal, text };
}
