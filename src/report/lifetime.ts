/**
 * When a memory entry was in force, rebuilt from its row and its revisions: what "active at the
 * start of the week" means for entries whose status has changed since.
 *
 * - From: the first `confirm` or `approve` revision (a pending entry a person confirmed, a pending
 *   rule approved); else its creation, unless it is pending now, was dropped while pending, or is
 *   a removal marker (empty text): those were never in force.
 * - Until: for an archived entry, its last revision (archiving is the last change an entry sees:
 *   remove, promote, replace, archive), or its last update when it has no revision; null while active.
 * An entry is active at instant t when it came into force before t and had not left it before t.
 */
export interface EntryRow {
  id: string;
  status: string;
  text: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface RevisionRow {
  entityId: string;
  action: string;
  actorId: string | null;
  createdAt: Date;
}

export interface Lifetime {
  from: Date | null;
  until: Date | null;
}

const ACTIVATING = new Set(["confirm", "approve"]);

/** `revs`: this entry's revisions, oldest first. */
export function lifetimeOf(entry: EntryRow, revs: readonly RevisionRow[]): Lifetime {
  if (entry.text === "") return { from: null, until: null };
  const activated = revs.find((r) => ACTIVATING.has(r.action));
  const neverInForce = entry.status === "pending" || revs.some((r) => r.action === "drop");
  const from = activated ? activated.createdAt : neverInForce ? null : entry.createdAt;
  if (from === null) return { from: null, until: null };
  const until = entry.status === "archived" ? (revs.at(-1)?.createdAt ?? entry.updatedAt) : null;
  return { from, until };
}

export function activeAt(life: Lifetime, t: Date): boolean {
  return life.from !== null && life.from < t && (life.until === null || life.until >= t);
}

export function within(d: Date | null, start: Date, end: Date): boolean {
  return d !== null && d >= start && d < end;
}

/** Revisions grouped by entity, each list oldest first. */
export function byEntity<R extends RevisionRow>(revs: readonly R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of [...revs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())) {
    const list = out.get(r.entityId);
    if (list) list.push(r);
    else out.set(r.entityId, [r]);
  }
  return out;
}
