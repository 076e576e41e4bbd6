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

/** The workspace's message count as last counted (however old), or undefined when never counted here. */
export function keptDocs(db: Database, workspaceId: string): number | undefined {
  return kept.get(db)?.get(workspaceId)?.value.docs;
}

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

/**
 * Document frequencies (messages in the asker's scope holding a word, capped at DF_CAP), kept per
 * asker's scope (`asker`: workspace, person, readable channels) and word for STATS_FRESH_MS: they
 * are IDF weights too, and counting a common word to the cap read thousands of rows, in history and
 * in every readable channel. Kept for 30 s, a search run longer than that counted every word again
 * (the slow tail of channel knowledge: each word's first search). Results are never read from here.
 */
const DF_WORDS_MAX = 5000;
const frequencies = new WeakMap<Database, Map<string, Map<string, { n: number; at: number }>>>();

function keptFor(db: Database, asker: string): Map<string, { n: number; at: number }> {
  let byAsker = frequencies.get(db);
  if (!byAsker) frequencies.set(db, (byAsker = new Map()));
  let words = byAsker.get(asker);
  if (!words || words.size > DF_WORDS_MAX) {
    if (byAsker.size > 2000) byAsker.clear();
    byAsker.set(asker, (words = new Map()));
  }
  return words;
}

/** Each word's count: kept ones while fresh, the others counted now (one `count` for them all). */
export async function documentFrequencies(db: Database, asker: string, words: string[], count: (missing: string[]) => Promise<number[]>, now = Date.now()): Promise<number[]> {
  const kept = keptFor(db, asker);
  const missing = [...new Set(words.filter((w) => !(now - (kept.get(w)?.at ?? -Infinity) < STATS_FRESH_MS)))];
  if (missing.length > 0) {
    const counted = await count(missing);
    const at = Date.now();
    missing.forEach((w, i) => kept.set(w, { n: counted[i] ?? 0, at }));
  }
  return words.map((w) => kept.get(w)?.n ?? 0);
}
