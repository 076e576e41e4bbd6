/**
 * The views' part of validity (issue 27): an entry that replaced another says since when, and what
 * it was ("since 2026-12-02 (was: Thursdays)"); open disagreements between entries are listed with
 * Keep new / Keep old / Keep both, which run `keep new|old|both <id>` (commands/conflict.ts).
 * What is read goes through the viewer's scope: a disagreement is listed only when both entries are
 * readable where the view was asked, and a "was" only from the entry's own scope.
 */
import type { Scope, WorkspaceScope } from "../ground/types.ts";
import type { ViewItem } from "../ground/view-model.ts";
import type { ConflictPair, MemoryEntry } from "../memory/conflict-store.ts";
import { dayOf, sinceOf } from "../memory/validity.ts";
import { excerpt } from "../lessons/lesson-case.ts";

/** What the views read validity with (Learning). */
export interface ValidityDeps {
  disputes(scope: Scope): Promise<ConflictPair[]>;
  previousTexts(scope: WorkspaceScope, entries: readonly MemoryEntry[]): Promise<Map<string, { text: string; until: Date }>>;
}

const WAS_CHARS = 80;

/** "; since 2026-12-02 (was: …)" after an entry that replaced a text; "" for one never replaced. */
export function sinceWas(e: MemoryEntry, previous: ReadonlyMap<string, { text: string }>): string {
  const was = previous.get(e.id);
  return was ? `; since ${dayOf(sinceOf(e))} (was: ${excerpt(was.text, WAS_CHARS)})` : "";
}

/** One item per open disagreement, the newer claim first, with the three answers. */
export function disputeItems(pairs: readonly ConflictPair[]): ViewItem[] {
  return pairs.map(({ newer, older }) => ({
    id: newer.id,
    markdown: `"${excerpt(newer.text, 200)}" _(new, ${dayOf(sinceOf(newer))})_ **disagrees with** "${excerpt(older.text, 200)}" _(${older.scope === "team" ? "team" : older.scope === "channel" ? "channel" : "profile"}, since ${dayOf(sinceOf(older))})_`,
    buttons: [
      { label: "Keep new", command: "keep", args: ["new", newer.id], style: "primary" },
      { label: "Keep old", command: "keep", args: ["old", newer.id] },
      { label: "Keep both", command: "keep", args: ["both", newer.id] },
    ],
  }));
}
