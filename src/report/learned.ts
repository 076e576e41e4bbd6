/**
 * "What cairn learned this week": team memory (rules, facts, lessons in team scope) that came into
 * force this week and is still in force at its end, each with who taught it: the lesson case's
 * `by.name` for what came from a correction, else the display name of the person whose change
 * wrote it (the first revision's actor, or the entry's author). `approvedBy`: whoever put it in force
 * when that was someone else (a ✅ on a proposal, a pending rule approved).
 *
 * Only team scope is listed: the report is posted in a channel and shown to anyone in the workspace,
 * and a channel's lessons or a person's own memory are not everyone's to read (they are counted).
 */
import type { WorkspaceScope } from "../ground/scope.ts";
import { nameOf } from "../learning/places.ts";
import { parseCase } from "../lessons/lesson-case.ts";
import { activeAt, within } from "./lifetime.ts";
import type { HistoryEntry } from "./memory-history.ts";
import type { Period } from "./metrics.ts";
import type { ReportStore } from "./report-store.ts";

export interface LearnedItem {
  id: string;
  kind: string;
  text: string;
  taughtBy: string | null;
  approvedBy: string | null;
  at: string;
}

export const LEARNED_MAX = 15;

export async function learnedThisWeek(reports: ReportStore, scope: WorkspaceScope, entries: readonly HistoryEntry[], p: Period): Promise<LearnedItem[]> {
  const items = entries
    .filter((e) => e.scope === "team" && within(e.life.from, p.start, p.end) && activeAt(e.life, p.end))
    .sort((a, b) => a.life.from!.getTime() - b.life.from!.getTime());
  const ids = new Set<string>();
  for (const e of items) {
    if (e.createdById) ids.add(e.createdById);
    for (const r of e.revisions) if (r.actorId) ids.add(r.actorId);
  }
  const people = await reports.people(scope, ids);
  const name = (id: string | null | undefined) => {
    if (!id) return null;
    const person = people.find((x) => x.id === id);
    return person ? nameOf(person) : null;
  };
  return items.map((e) => {
    const lessonCase = parseCase(e.origin);
    const teacherId = lessonCase?.by.id ?? e.revisions[0]?.actorId ?? e.createdById;
    const activator = e.revisions.find((r) => r.action === "confirm" || r.action === "approve") ?? e.revisions.find((r) => r.action === "add");
    const approverId = activator?.actorId && activator.actorId !== teacherId ? activator.actorId : null;
    return {
      id: e.id,
      kind: e.kind,
      text: e.text,
      taughtBy: lessonCase?.by.name ?? name(teacherId),
      approvedBy: name(approverId),
      at: e.life.from!.toISOString(),
    };
  });
}
