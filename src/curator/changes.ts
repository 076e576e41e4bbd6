/**
 * What a curator run decides, as data: planned first (deterministically, then from the model's
 * validated plan), then applied one change at a time (curation-store.ts), or only reported (a dry run).
 * Each change carries what it expects to find, so one applied after the item changed is skipped.
 */
export type SkillStatusAction = "stale" | "archive" | "reactivate";

export type Change =
  | { type: "skill_status"; skillId: string; name: string; from: string; action: SkillStatusAction; reason: string }
  | {
      type: "skill_merge";
      /** The umbrella's name: a new skill, or one of the merged ones rewritten (`existingId`). */
      into: string;
      existingId: string | null;
      content: string;
      description: string;
      /** Where the umbrella lives: the merged skills' own scope (they share it). */
      placement: { scope: string; ownerId: string | null; channelKey: string | null };
      /** The skills archived into it, with the content hash they were planned on. */
      absorbed: { id: string; name: string; contentHash: string }[];
      /** The umbrella's expected content hash, when it is an existing skill. */
      existingHash: string | null;
    }
  | { type: "lesson_archive"; entryId: string; text: string; reason: string }
  | { type: "memory_merge"; keepId: string; keepText: string; text: string; absorbed: { id: string; text: string }[]; reason: string }
  | { type: "memory_flag"; entryId: string; text: string; flag: string };

const short = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One line per change, for the run's summary and the dry run's report. */
export function describeChange(c: Change): string {
  switch (c.type) {
    case "skill_status":
      return `${c.action === "reactivate" ? "reactivate" : c.action === "stale" ? "mark stale" : "archive"} skill ${c.name} (${c.reason})`;
    case "skill_merge":
      return `merge skills ${c.absorbed.map((a) => a.name).join(", ")} into ${c.into}`;
    case "lesson_archive":
      return `archive lesson ${c.entryId} "${short(c.text)}" (${c.reason})`;
    case "memory_merge":
      return `merge entries ${[c.keepId, ...c.absorbed.map((a) => a.id)].join(", ")} into ${c.keepId}`;
    case "memory_flag":
      return `flag entry ${c.entryId} (${short(c.flag, 100)})`;
  }
}

export interface Counts {
  stale: number;
  archived: number;
  reactivated: number;
  skillMerges: number;
  lessonsArchived: number;
  memoryMerges: number;
  flagged: number;
}

export function countChanges(changes: readonly Change[]): Counts {
  const n: Counts = { stale: 0, archived: 0, reactivated: 0, skillMerges: 0, lessonsArchived: 0, memoryMerges: 0, flagged: 0 };
  for (const c of changes) {
    if (c.type === "skill_status") n[c.action === "stale" ? "stale" : c.action === "archive" ? "archived" : "reactivated"]++;
    else if (c.type === "skill_merge") n.skillMerges++;
    else if (c.type === "lesson_archive") n.lessonsArchived++;
    else if (c.type === "memory_merge") n.memoryMerges++;
    else n.flagged++;
  }
  return n;
}
