/**
 * The reach of a person's team write (issue 26): team memory is in every prompt of the workspace,
 * so what one person asks cairn to remember "for the team" reaches, without a second person, only
 * the audience that already saw the words: the channel it was said in, or from a DM the person's
 * own profile. It is kept there as a proposal (`proposedScope` "team") that a teammate's ✅ or
 * `/cairn approve` moves to the team (share-store.ts). Who may share alone is decided above the
 * store (admission/trust.ts) and handed in as a function, so every write path asks it.
 */
import type { MemoryTarget, PersonScope, Scope } from "../ground/types.ts";
import { displayEntry } from "./entries.ts";

/** The whole workspace at once, or only where it was said (kept there and proposed). */
export type TeamReach = "workspace" | "here";
export type ReachOf = (scope: PersonScope) => Promise<TeamReach>;

/** Without a policy (tests of the store alone): every team write reaches the workspace, as before issue 26. */
export const WORKSPACE_REACH: ReachOf = () => Promise.resolve("workspace");

/** Where a team write of someone not trusted to share alone is kept: this channel, or the person's profile in a DM. */
export const hereOf = (scope: Scope): MemoryTarget => (scope.isDm ? "user" : "channel");

/** What the model is told of a proposed team write: where it is now, and what shares it. */
export function proposedLine(text: string, id: string, scope: Scope, replacing: string | null, pending: boolean): string {
  const where = scope.isDm ? "the person's own profile (private to them)" : `this channel only (<#${scope.channelKey}>)`;
  const what = replacing ? `"${text}" (to replace the team entry "${replacing}")` : `"${text}"`;
  if (pending) return `${what} is held for the person's confirmation (id ${id}); once confirmed it is kept in ${where} and waits for a teammate to share it with the whole workspace.`;
  const how = scope.isDm
    ? `A teammate's approval (/cairn approve ${id}, or Approve in the team view) shares it with the whole workspace.`
    : `A ✅ from a teammate on your reply (or /cairn approve ${id}) shares it with the whole workspace.`;
  return `SAVED FOR ${scope.isDm ? "THE PERSON ONLY" : "THIS CHANNEL ONLY"}, NOT THE WHOLE TEAM: ${what} is in ${where} (id ${id}). ${how} Tell them so plainly, e.g. "Saved for ${scope.isDm ? "you" : "this channel"}. ${how}"`;
}

/** What the model is told of a write the safety screen held: why, where it would go, and what releases it. */
export function heldLine(text: string, id: string, target: MemoryTarget, reason: string): string {
  const where = target === "team" ? "the whole workspace" : target === "channel" ? "this channel" : "the person's profile";
  return `HELD, NOT SAVED FOR ANYONE YET: "${text}" (id ${id}) was held by the safety screen (${reason}). It is in no one's memory until a teammate approves it (a ✅ on your reply, or /cairn approve ${id}); then it goes to ${where}. Tell the person plainly why it was held and what releases it.`;
}

/** What the model is told of an entry held pending (a DM's team entry, or a review's change). */
export function pendingLine(text: string, id: string, replaced: { id: string | null; text: string } | null, review: boolean): string {
  if (!review) {
    return `"${text}" is held as PENDING (id ${id}): this is a private DM, so it reaches the team only after the person confirms, by reacting ✅ to your reply or with /cairn confirm ${id}. Tell them so.`;
  }
  const what = replaced ? `${text ? `replacing "${displayEntry(replaced)}" with "${text}"` : `removing "${displayEntry(replaced)}"`}` : `"${text}"`;
  return `${what} is held as PENDING (id ${id}): a review changes team memory, or what a person wrote, only once the person confirms. They will be told; do not repeat it.`;
}
