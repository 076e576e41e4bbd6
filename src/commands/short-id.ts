/**
 * Short ids, accepted wherever a command takes an id: a token of MIN_PREFIX or more characters that
 * starts exactly one id of its kind the asker can see stands for that id; one that starts several is
 * answered with them (short forms and a few words each) and the command is not run; one that starts
 * none is handed on as typed, so the command says "not found" as before. The lookups run in the
 * asker's scope (ids/short-id-store.ts, and the visibility `history` applies to revisions), so an
 * answer never names an id the asker could not see. Answers show ids short (ground/short-id.ts).
 */
import type { CommandName, CommandReply } from "../ground/commands.ts";
import { FULL_ID, MIN_PREFIX, shortIds } from "../ground/short-id.ts";
import { scopeOf, workspaceScopeOf, type Place } from "../history/store/store.ts";
import type { EntryCandidate, ShortIdStore } from "../ids/short-id-store.ts";
import type { Learning } from "../learning/learning.ts";
import { proposalSummary } from "../learning/skill-proposals.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { itemVisible } from "../revisions/items.ts";
import type { RevisionStore } from "../revisions/revision-store.ts";
import type { SkillStore } from "../skills/store.ts";
import { isConflictVerdict } from "./conflict.ts";

/** What short ids are looked up in: entries, skill proposals, revisions, cairn's posts here. */
export interface ShortIdDeps {
  shortIds: ShortIdStore;
  revisions: Pick<RevisionStore, "itemOf">;
  learning: Pick<Learning, "pendingSkillChanges">;
  skills: Pick<SkillStore, "list">;
}

/** memory entries seen here | skills | proposals waiting for approval (entries, skill changes) | revisions | cairn's posts (`why`). */
export type IdKind = "entry" | "skill" | "proposal" | "revision" | "post";

export interface Candidate {
  id: string;
  /** A few words saying what it is, from what the asker can see. */
  words: string;
}

export type Resolution = { kind: "id"; id: string } | { kind: "ambiguous"; candidates: Candidate[] } | { kind: "none" };

const WORDS = 50;
const day = (d: Date): string => d.toISOString().slice(0, 10);

/** Which arguments of a command are ids, and of which kinds. */
export function idArgs(name: CommandName, args: readonly string[]): { index: number; kinds: IdKind[] }[] {
  const each = (kinds: IdKind[]) => args.map((_, index) => ({ index, kinds }));
  switch (name) {
    case "forget":
      return args[0] && args[0].toLowerCase() !== "me" ? [{ index: 0, kinds: ["entry"] }] : [];
    case "confirm":
      return each(["entry"]);
    case "verify":
      return each(["entry", "skill"]);
    case "approve":
    case "reject":
      return [{ index: 0, kinds: ["entry", "proposal"] }];
    case "keep":
      return [{ index: isConflictVerdict(args[0]) ? 1 : 0, kinds: ["entry"] }];
    case "reword":
      return [{ index: 0, kinds: ["entry"] }];
    case "history":
      return args[0]?.toLowerCase() === "persona" ? [] : [{ index: 0, kinds: ["entry", "skill"] }];
    case "rollback":
      return [{ index: 0, kinds: ["revision"] }];
    case "why":
      return [{ index: 0, kinds: ["post"] }];
    default:
      return [];
  }
}

/** The ids of these kinds the asker can see that start with `token`: one, several, or none. */
export async function resolveId(deps: ShortIdDeps, place: Place, kinds: readonly IdKind[], token: string): Promise<Resolution> {
  if (token.length < MIN_PREFIX || token.length >= FULL_ID) return { kind: "none" };
  // An entry asked for the team may be both seen here and waiting for approval: counted once.
  const found = [...new Map((await Promise.all(kinds.map((k) => candidatesOf(deps, place, k, token)))).flat().map((c) => [c.id, c])).values()];
  const exact = found.find((c) => c.id === token);
  if (exact) return { kind: "id", id: exact.id };
  if (found.length === 1) return { kind: "id", id: found[0]!.id };
  return found.length ? { kind: "ambiguous", candidates: found } : { kind: "none" };
}

/**
 * The command's arguments with every short id made whole, or the answer to give instead when one is
 * ambiguous (nothing is run then). Tokens that start no visible id stay as typed.
 */
export async function withFullIds(deps: ShortIdDeps, place: () => Promise<Place>, name: CommandName, args: readonly string[]): Promise<{ args: readonly string[] } | { reply: CommandReply }> {
  const slots = idArgs(name, args).filter((s) => (args[s.index]?.length ?? 0) >= MIN_PREFIX && args[s.index]!.length < FULL_ID);
  if (slots.length === 0) return { args };
  const p = await place();
  const out = [...args];
  for (const { index, kinds } of slots) {
    const token = args[index]!;
    const r = await resolveId(deps, p, kinds, token);
    if (r.kind === "ambiguous") return { reply: ambiguousReply(token, r.candidates) };
    if (r.kind === "id") out[index] = r.id;
  }
  return { args: out };
}

export function ambiguousReply(token: string, candidates: readonly Candidate[]): CommandReply {
  const short = shortIds(candidates.map((c) => c.id));
  return {
    text: [`\`${token}\` is the start of more than one id you can see. Nothing was changed; send the command again with one of these:`, ...candidates.map((c) => `- \`${short(c.id)}\` ${c.words}`)].join("\n"),
    ephemeral: true,
    outcome: "not_found",
  };
}

async function candidatesOf(deps: ShortIdDeps, place: Place, kind: IdKind, token: string): Promise<Candidate[]> {
  // Generated ids are lowercase; SQLite's LIKE ignores case and PostgreSQL's does not, so both are held to the exact prefix.
  const prefix = kind === "post" ? token : token.toLowerCase();
  const starts = (id: string) => id.startsWith(prefix);
  const channels = new Set(place.conversation.isDm ? [] : [place.conversation.channelId]);
  const entryWords = (e: EntryCandidate): Candidate => ({ id: e.id, words: `${e.scope} ${e.kind}: ${excerpt(e.text.replace(/\s+/g, " "), WORDS)}` });
  switch (kind) {
    case "entry":
      return (await deps.shortIds.entries(scopeOf(place), prefix)).filter((e) => starts(e.id)).map(entryWords);
    case "skill":
      // The skills this place lists (`skills`): its index, the same reads.
      return (await deps.skills.list(scopeOf(place))).filter((k) => starts(k.id)).map((k) => ({ id: k.id, words: `skill \`${k.name}\`` }));
    case "proposal": {
      // What the team view shows this reader as waiting for approval: entries asked for the team, and skill proposals.
      const [shares, skills] = await Promise.all([deps.shortIds.shares(workspaceScopeOf(place), channels, prefix), deps.learning.pendingSkillChanges(workspaceScopeOf(place), channels)]);
      return [...shares.filter((e) => starts(e.id)).map(entryWords), ...skills.filter((p) => starts(p.id)).map((p) => ({ id: p.id, words: excerpt(proposalSummary(p), WORDS) }))];
    }
    case "revision": {
      const out: Candidate[] = [];
      for (const rev of (await deps.shortIds.revisions(workspaceScopeOf(place), prefix)).filter((r) => starts(r.id))) {
        // The persona is the workspace's, read by all; a skill's or entry's revision only when its item is visible here (as `history`).
        if (rev.entityType === "persona") {
          out.push({ id: rev.id, words: `${rev.action} of the persona, ${day(rev.createdAt)}` });
          continue;
        }
        const item = await deps.revisions.itemOf(workspaceScopeOf(place), rev);
        if (!item || !itemVisible(scopeOf(place), item)) continue;
        const of = item.type === "skill" ? `skill \`${item.row.name}\`` : `"${excerpt(item.row.text.replace(/\s+/g, " "), WORDS)}"`;
        out.push({ id: rev.id, words: `${rev.action} of ${of}, ${day(rev.createdAt)}` });
      }
      return out;
    }
    case "post": {
      const c = place.conversation;
      const posts = await deps.shortIds.posts(workspaceScopeOf(place), { channelId: c.channelId, dmConversationId: c.isDm ? c.id : null }, prefix);
      return posts.filter((d) => starts(d.platformId)).map((d) => ({ id: d.platformId, words: `a post of mine, ${d.createdAt.toISOString().slice(0, 16).replace("T", " ")}` }));
    }
  }
}
