/**
 * What the model is asked about, chosen deterministically first so its prompt stays small: groups
 * of agent-made skills that share many words, groups of near-duplicate rewritable entries, blocks
 * over their budget, and pairs of entries that share enough words to possibly disagree. Only items
 * of one placement (scope, owner, channel) are ever grouped, so a merge never moves a person's
 * private item into a shared one; a pair across placements is a team entry with a narrower one,
 * and only the narrower one may be flagged (a flag on a team entry must not quote a private one).
 */
import type { MemoryEntry } from "./curation-store.ts";
import type { MemoryBudgets } from "../memory/store.ts";
import type { MemoryTarget } from "../ground/types.ts";
import { kindOf, usedChars } from "../memory/store.ts";
import { docKeys } from "../history/text.ts";
import { parseSkillMd } from "../skills/skillmd.ts";
import { placementKey, type Library, type LibrarySkill } from "./library.ts";
import { isAgentSkill, mayFlagEntry, mayRewriteEntry } from "./policy.ts";

/** Shared-word cosine (as distill.ts `overlap`) at or above which two skills are worth showing together. */
export const SKILL_OVERLAP = 0.4;
/** ... two entries of one placement and kind may be near-duplicates. */
export const DUPLICATE_OVERLAP = 0.5;
/** ... two entries may contradict each other (a contradiction shares the subject, not the claim). */
export const CONTRADICTION_OVERLAP = 0.3;

export const LIMITS = {
  skillGroups: 3,
  skillsPerGroup: 4,
  /** A longer SKILL.md is not merged: the prompt stays compact and the umbrella could not keep it whole. */
  skillChars: 3_000,
  entryGroups: 6,
  entriesPerGroup: 12,
  pairs: 12,
} as const;

type Keys = ReadonlySet<string>;

function keysOf(text: string): Keys {
  return new Set(docKeys(text));
}

function cosine(x: Keys, y: Keys): number {
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const k of x) if (y.has(k)) shared++;
  return shared / Math.sqrt(x.size * y.size);
}

/** Connected groups of items (of one placement) linked by `similar`, largest first, at least two each. */
function clusters<T>(items: readonly T[], keys: (t: T) => Keys, min: number, max: number): T[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const k = items.map(keys);
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) if (cosine(k[i]!, k[j]!) >= min) parent[find(i)] = find(j);
  const groups = new Map<number, T[]>();
  items.forEach((item, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), item]));
  return [...groups.values()].filter((g) => g.length >= 2).map((g) => g.slice(0, max)).sort((a, b) => b.length - a.length);
}

function byPlacement<T extends { scope: string; ownerId: string | null; channelKey: string | null }>(rows: readonly T[], extra: (t: T) => string = () => ""): T[][] {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const key = `${placementKey(r)}|${extra(r)}`;
    out.set(key, [...(out.get(key) ?? []), r]);
  }
  return [...out.values()];
}

/**
 * What two skills are compared on: the name's words, the description and the body. Not the
 * frontmatter's keys, nor the "Use when" most descriptions start with: every skill has those.
 */
function skillText(s: LibrarySkill): string {
  const parsed = parseSkillMd(s.content);
  const body = parsed.ok ? parsed.skill.body : s.content;
  return `${s.name.replace(/[-_.]/g, " ")} ${s.description.replace(/^\s*use\s+(?:this\s+)?(?:when|for|to)\b/i, "")} ${body}`;
}

/** Groups of agent-made skills (one placement each) that may cover the same class of task. */
export function skillGroups(lib: Library, exclude: ReadonlySet<string>): LibrarySkill[][] {
  const eligible = lib.skills.filter((s) => isAgentSkill(s, lib.facts) && !exclude.has(s.id) && s.fileCount === 0 && s.content.length <= LIMITS.skillChars);
  return byPlacement(eligible)
    .flatMap((rows) => clusters(rows, (s) => keysOf(skillText(s)), SKILL_OVERLAP, LIMITS.skillsPerGroup))
    .slice(0, LIMITS.skillGroups);
}

export interface EntryGroup {
  why: "duplicates" | "over_budget";
  entries: MemoryEntry[];
}

export interface EntryPair {
  a: MemoryEntry;
  b: MemoryEntry;
  /** The side(s) a contradiction may be flagged on. */
  flaggable: MemoryEntry[];
}

export interface MemoryCandidates {
  groups: EntryGroup[];
  pairs: EntryPair[];
}

export function memoryCandidates(lib: Library, budgets: MemoryBudgets, exclude: ReadonlySet<string>): MemoryCandidates {
  const live = lib.entries.filter((e) => !exclude.has(e.id));
  const rewritable = live.filter((e) => mayRewriteEntry(e, lib.facts));
  const groups: EntryGroup[] = byPlacement(rewritable, (e) => kindOf(e))
    .flatMap((rows) => clusters(rows, (e) => keysOf(e.text), DUPLICATE_OVERLAP, LIMITS.entriesPerGroup))
    .map((entries) => ({ why: "duplicates" as const, entries }));
  for (const block of byPlacement(live)) {
    const first = block[0]!;
    const hot = block.filter((e) => kindOf(e) !== "lesson");
    if (usedChars(hot.map((e) => e.text)) <= budgets[first.scope as MemoryTarget]) continue;
    const facts = hot.filter((e) => kindOf(e) === "fact" && mayRewriteEntry(e, lib.facts)).slice(0, LIMITS.entriesPerGroup);
    if (facts.length >= 2) groups.push({ why: "over_budget", entries: facts });
  }
  return { groups: groups.slice(0, LIMITS.entryGroups), pairs: contradictionPairs(live, lib) };
}

function contradictionPairs(entries: readonly MemoryEntry[], lib: Library): EntryPair[] {
  const keys = new Map(entries.map((e) => [e.id, keysOf(e.text)]));
  const scored: (EntryPair & { score: number })[] = [];
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      const a = entries[i]!;
      const b = entries[j]!;
      const flaggable = flaggableSides(a, b).filter((e) => mayFlagEntry(e, lib.facts));
      if (flaggable.length === 0) continue;
      const score = cosine(keys.get(a.id)!, keys.get(b.id)!);
      if (score >= CONTRADICTION_OVERLAP) scored.push({ a, b, flaggable, score });
    }
  }
  return scored
    .sort((x, y) => y.score - x.score)
    .slice(0, LIMITS.pairs)
    .map(({ a, b, flaggable }) => ({ a, b, flaggable }));
}

/** Which of two entries may carry a flag naming the other: both in one placement; else only the narrower under a team entry. */
function flaggableSides(a: MemoryEntry, b: MemoryEntry): MemoryEntry[] {
  if (placementKey(a) === placementKey(b)) return [a, b];
  if (a.scope === "team") return [b];
  if (b.scope === "team") return [a];
  // Two channels, two people, a channel and a person: never seen together, nothing to reconcile.
  return [];
}
