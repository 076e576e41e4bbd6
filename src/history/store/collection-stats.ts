/**
 * The workspace's history figures a search weighs words by (search-queries.ts `stats`), kept between
 * searches. Counting them reads every message of the workspace: a second at a million messages, ten
 * at ten million (docs/scale.md), where a search takes a fraction of that. They move slowly and
 * only nudge weights, so a count serves for STATS_FRESH_MS; after that the last count still serves
 * while one new count runs beside the searches, and only past STATS_MAX_AGE_MS (or the first time)
 * does a search wait for it.
 */
import type { Database } from "../../db/client.ts";
import type { Stats } from "./search-queries.ts";

export const STATS_FRESH_MS = 5 * 60_000;
export const STATS_MAX_AGE_MS = 60 * 60_000;

interface Entry {
  at: number;
  value: Stats;
  counting: Promise<void> | null;
}

const kept = new WeakMap<Database, Map<string, Entry>>();

export async function collectionStats(db: Database, workspaceId: string, count: () => Promise<Stats>, now = Date.now()): Promise<Stats> {
  let byWorkspace = kept.get(db);
  if (!byWorkspace) kept.set(db, (byWorkspace = new Map()));
  const entry = byWorkspace.get(workspaceId);
  if (entry && now - entry.at < STATS_FRESH_MS) return entry.value;
  if (entry && now - entry.at < STATS_MAX_AGE_MS) {
    // A failed count keeps the last one; the next search past the fresh window tries again.
    entry.counting ??= count().then(
      (value) => void Object.assign(entry, { at: Date.now(), value, counting: null }),
      () => void (entry.counting = null),
    );
    return entry.value;
  }
  const value = await count();
  if (byWorkspace.size > 2000) byWorkspace.clear();
  byWorkspace.set(workspaceId, { at: Date.now(), value, counting: null });
  return value;
}
