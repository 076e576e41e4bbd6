/**
 * An entry's interval of validity, read from its row (issue 27): since when its text holds, until
 * when it held (a superseded row), and when a person last confirmed it. Pure, so prompts, views,
 * the report and the jobs read dates the same way.
 *
 * A replace keeps the entry's id and moves `validFrom`; the text it replaced is kept as a row of
 * its own, status "superseded", `supersededById` naming the entry now in force. An entry that a
 * contradicting one superseded (keep new) is closed the same way. Superseded rows are never active,
 * so no prompt reads them; the history tool and the views do.
 */

export interface Dated {
  createdAt: Date;
  validFrom: Date | null;
  verifiedAt: Date | null;
}

/** Since when the entry's current text holds. */
export function sinceOf(e: Pick<Dated, "createdAt" | "validFrom">): Date {
  return e.validFrom ?? e.createdAt;
}

/** When a person last confirmed the entry holds: its verification, or the day its text came into force. */
export function lastConfirmed(e: Dated): Date {
  const since = sinceOf(e);
  return e.verifiedAt && e.verifiedAt > since ? e.verifiedAt : since;
}

const DAY_MS = 86_400_000;

/** Unconfirmed for longer than `days`: shown with its date, listed for review. */
export function isDue(e: Dated, now: Date, days: number): boolean {
  return now.getTime() - lastConfirmed(e).getTime() > days * DAY_MS;
}

/** "2026-03-01": the date people and the model read. */
export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/** " (last confirmed 2026-03-01)" after a shared item unconfirmed for `days`, else "". */
export function confirmedSuffix(e: Dated, now: Date, days: number): string {
  return isDue(e, now, days) ? ` (last confirmed ${dayOf(lastConfirmed(e))})` : "";
}

/** Statuses of memory rows: only "active" is ever in a prompt. */
export const SUPERSEDED = "superseded";

/**
 * The entries shown as disputed among those a place reads: of two entries marked as contradicting
 * each other (memory/conflict-store.ts), the older; one whose counterpart this place does not read
 * is disputed too. The newer is shown as it is, until a person says which holds.
 */
export function disputedIds(rows: readonly (Dated & { id: string; conflictWithId: string | null })[]): Set<string> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out = new Set<string>();
  for (const r of rows) {
    if (!r.conflictWithId) continue;
    const other = byId.get(r.conflictWithId);
    if (!other || sinceOf(r).getTime() < sinceOf(other).getTime() || (sinceOf(r).getTime() === sinceOf(other).getTime() && r.id < other.id)) out.add(r.id);
  }
  return out;
}

/** What the model reads after a disputed entry. */
export const DISPUTED_MARK = " [DISPUTED: a newer entry says otherwise and a person was asked which holds; if it matters, say both and that it is being settled]";
