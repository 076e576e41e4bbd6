/**
 * Sharing with the whole workspace what one person asked cairn to remember for the team, kept so
 * far where it was said (memory/reach.ts). One judgement for every way in: ✅ on cairn's reply to
 * the message that asked, `/cairn approve|reject <id>`, and the Approve / Reject buttons of the
 * team view (which run the commands).
 *
 * Rules, as for team rules and skill changes (approvals.ts, skill-proposals.ts): the teacher's own
 * judgement does not count (an admin's does, their own included); one teammate's approval shares
 * it. A rejection leaves it where it was said, no longer proposed. Every step is a revision.
 */
import { isAdmin } from "../admission/access.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import { MemoryError, type MemoryEntry, type Provenance } from "../memory/store.ts";
import { scopeOfEntry } from "../lessons/lesson-store.ts";
import { nameOf, postIn, type ReplyPlace } from "./places.ts";
import { workspaceOfPlace, type Person } from "./reply-place-store.ts";
import type { LearningContext } from "./context.ts";

export type ShareJudgement = { kind: "closed" } | { kind: "own" } | { kind: "shared"; entry: MemoryEntry } | { kind: "rejected" } | { kind: "stale" } | { kind: "refused"; reason: string };

/** A held write released: it reaches where it was asked to go. */
const RELEASED = (by: string, entry: Pick<MemoryEntry, "scope" | "text">) =>
  `✅ Approved by ${by} after the safety screen held it; saved for ${entry.scope === "team" ? "the whole workspace" : "this channel"} (from each person's next session): **${entry.text}**`;

export const SHARED = (by: string, text: string) => `✅ Shared with the whole workspace by ${by} (from each person's next session): **${text}**`;

/** A teammate's approval or rejection of an open proposal, with the rules above. */
export async function judgeShare(ctx: LearningContext, entry: MemoryEntry, judgeBy: Person, verdict: "approve" | "reject", via: Pick<Provenance, "source" | "sourceMessageId">): Promise<ShareJudgement> {
  if (entry.proposedScope === null || (entry.status !== "active" && entry.status !== "held")) return { kind: "closed" };
  const admin = isAdmin(ctx.settings.access, await ctx.places.platformOf(scopeOfEntry(entry)), judgeBy.externalId);
  if (!admin && entry.createdById === judgeBy.id) {
    ctx.log.info({ entry: entry.id, verdict }, "the teacher's own judgement of a shared write does not count");
    return { kind: "own" };
  }
  const by: Provenance = { ...via, actorId: judgeBy.id, reason: `${verdict === "approve" ? "shared" : "kept where it was said"} by ${nameOf(judgeBy)}${admin ? " (an admin)" : ""}${via.source === "reaction" ? " with ✅" : ""}` };
  if (verdict === "reject") return (await ctx.shares.decline(entry, by)) ? { kind: "rejected" } : { kind: "closed" };
  try {
    const outcome = await ctx.shares.share(entry, by);
    ctx.log.info({ entry: entry.id, outcome: outcome.kind }, "team write judged");
    return outcome.kind === "shared" ? { kind: "shared", entry: outcome.entry } : outcome;
  } catch (err) {
    if (!(err instanceof MemoryError)) throw err;
    return { kind: "refused", reason: err.message };
  }
}

/** What the conversation the proposal was said in is told; null when nothing changed. */
export function shareOutcome(j: ShareJudgement, by: string, entry: MemoryEntry): string | null {
  switch (j.kind) {
    case "shared":
      return entry.status === "held" ? RELEASED(by, j.entry) : SHARED(by, j.entry.text);
    case "rejected":
      if (entry.status === "held") return `${by} rejected what the safety screen held; it is not saved: **${entry.text}**`;
      return `${by} kept it where it was said, not shared with the whole workspace: **${entry.text}**`;
    case "refused":
      return `I could not share this with the whole workspace: ${j.reason}.`;
    case "stale":
      return `Not shared: the team entry it would replace was changed or removed since. **${entry.text}**`;
    default:
      return null;
  }
}

/** ✅ on cairn's reply: true when the message it answers asked for something kept for the team (whatever came of it). */
export async function approveShare(ctx: LearningContext, place: ReplyPlace, reactorId: string): Promise<boolean> {
  if (!place.question) return false;
  const scope = workspaceOfPlace(place);
  const entries = await ctx.shares.proposedFrom(scope, place.question.id);
  if (entries.length === 0) return false;
  const reactor = await ctx.places.person(scope, reactorId);
  if (!reactor) return true;
  for (const entry of entries) {
    const text = shareOutcome(await judgeShare(ctx, entry, reactor, "approve", { source: "reaction", sourceMessageId: place.reply.id }), nameOf(reactor), entry);
    if (text) await postIn(ctx, place, text);
  }
  return true;
}

/** `/cairn approve|reject <id>` for an entry asked for the team; its outcome posted where it was said (not a DM). Null when no such entry has the id. */
export async function judgeShareById(ctx: LearningContext, place: Place, verdict: "approve" | "reject", id: string): Promise<{ entry: MemoryEntry; judgement: ShareJudgement } | null> {
  const entry = await ctx.shares.find(workspaceScopeOf(place), id);
  if (!entry) return null;
  const judgement = await judgeShare(ctx, entry, place.person, verdict, { source: "tool", sourceMessageId: null });
  const text = shareOutcome(judgement, nameOf(place.person), entry);
  const where = text && entry.sourceMessageId !== null ? await ctx.places.saidIn(workspaceScopeOf(place), entry.sourceMessageId) : null;
  // A DM is its owner's: a teammate's decision is told to the person when they look (`me`), not posted there.
  if (text && where && !where.conversation.isDm) await postIn(ctx, where, text);
  return { entry, judgement };
}
