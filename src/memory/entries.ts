/**
 * The vocabulary of memory entries, apart from the store that reads and writes them: their kinds,
 * limits and budgets, the error the model is shown, how an entry is shown and scanned before a
 * write, and what a batch returns. Pure, so the store and its confirmation half (pending-store.ts)
 * both import it without importing each other.
 */
import type { MemoryTarget } from "../ground/types.ts";
import { RULES_VERSION, scanForWrite, scanStored } from "../safety/scanner.ts";
import { UserFacingError } from "../ground/errors.ts";

/**
 * fact: shown in every prompt of its scope, within the target's character budget.
 * lesson: a correction or convention, shown with a message only when the message touches it (see
 * src/lessons/recall.ts), so a channel can keep many without every prompt carrying all of them.
 * rule: a team rule, an approved correction in ALWAYS/NEVER form (src/learning): in every prompt of
 * the workspace like a team fact, within the team budget; changed only through corrections and
 * approvals, never by the memory tool.
 */
export type MemoryKind = "fact" | "lesson" | "rule";

/** Lessons a target may hold, and the length of one: they are recalled a few at a time, never all. */
export const LESSON_LIMITS = { perTarget: 300, chars: 500 } as const;

export type MemoryOp =
  | { action: "add"; target: MemoryTarget; content: string; kind?: MemoryKind }
  | { action: "replace"; target: MemoryTarget; old_text: string; content: string }
  | { action: "remove"; target: MemoryTarget; old_text: string };

export type MemoryBudgets = Record<MemoryTarget, number>;

export class MemoryError extends UserFacingError {
  override name = "MemoryError";
}

export const TARGETS: readonly MemoryTarget[] = ["team", "channel", "user"];

export function kindOf(entry: { kind: string }): MemoryKind {
  return entry.kind === "lesson" ? "lesson" : entry.kind === "rule" ? "rule" : "fact";
}

export function usedChars(texts: readonly string[]): number {
  return texts.reduce((n, t) => n + t.length, 0);
}

export const normalize = (s: string) => s.toLowerCase().replace(/\s+/g, " ").replace(/[.!\s]+$/, "").trim();

/**
 * How an entry is shown to the model. One stored before a scanning rule existed, and matching it
 * now, is shown as `[BLOCKED: reason]` (never its text), with the id that still lets it be removed.
 */
export function displayEntry(entry: { id: string | null; text: string; scannedWith?: string | null }): string {
  // Written through the store under the current rules: it passed them then, and they have not changed.
  if (entry.scannedWith === RULES_VERSION) return entry.text;
  const verdict = scanStored(entry.text);
  if (verdict.ok) return entry.text;
  return `[BLOCKED: ${verdict.reason}]${entry.id ? ` (remove it with old_text "id:${entry.id}")` : ""}`;
}

/** Scans text before it is written: blocks threats, redacts secrets. Throws MemoryError for the model. */
export function cleanForWrite(text: string, where: string): { text: string; note: string | null } {
  const verdict = scanForWrite(text);
  if (!verdict.ok) throw new MemoryError(`${where}${verdict.message}`);
  const note = verdict.redactions.length ? `secrets were redacted before saving (${verdict.redactions.map((r) => r.kind).join(", ")}); never store credentials` : null;
  return { text: verdict.text, note };
}

export function listEntries(entries: readonly { id: string | null; text: string; kind?: MemoryKind }[]): string {
  return entries.length === 0 ? "  (none)" : entries.map((e) => `  - ${e.kind === "lesson" ? "(lesson) " : e.kind === "rule" ? "(team rule) " : ""}${displayEntry(e)}`).join("\n");
}

/** One formatter for all: toLocaleString sets one up on every call, at about ten times the cost of a format. */
const GROUPED = new Intl.NumberFormat("en-US");
export const grouped = (n: number): string => GROUPED.format(n);

/** `[67% - 1,474/2,200 chars]`: the budget header the prompt and tool results show. */
export function budgetHeader(used: number, limit: number): string {
  const pct = limit === 0 ? 100 : Math.round((used / limit) * 100);
  return `[${pct}% - ${grouped(used)}/${grouped(limit)} chars]`;
}

/** "82 of 1,375 characters used": the budget as people read it (`/me`, the views); the model reads `budgetHeader`. */
export function budgetWords(used: number, limit: number): string {
  return `${grouped(used)} of ${grouped(limit)} characters used`;
}

export interface ApplyOutcome {
  /** One line per operation, in order: what happened. */
  lines: string[];
  usage: { target: MemoryTarget; used: number; limit: number; count: number; lessons: number }[];
  changed: number;
  /**
   * Every change written (grouped by target); `pending` ones wait for a person's confirmation,
   * `proposed` ones were asked for the team and are kept at `target` until a teammate shares them.
   */
  writes: { id: string; action: "add" | "replace" | "remove"; target: MemoryTarget; kind: MemoryKind; text: string; pending: boolean; proposed?: true; held?: true }[];
}

export interface ApplyOptions {
  /**
   * The batch comes from a background review (provenance "review"), not from the person: it may not
   * change the team's memory or what a person wrote on its own. Team adds are held pending, and a
   * replace or remove of a team entry or of an entry not written by a review becomes a pending
   * entry naming the one it would replace (`replacesId`; text "" for a removal), the original left
   * as it is. The person whose conversation it was confirms (see `confirm`).
   */
  review?: boolean;
  /**
   * Adds the safety screen held (safety/screen.ts), by operation index, with its reason: written with
   * status "held" where they were asked to go, in no prompt, until a person other than the writer
   * releases them (memory/share-store.ts) or rejects them.
   */
  held?: ReadonlyMap<number, string>;
}

/** An entry as a batch of `MemoryStore.apply` works on it, before anything is written. */
export interface Working {
  pending?: boolean;
  /** A pending change (a review's) of this active entry: its new text, or "" for a removal. */
  replacesId?: string;
  /** Kept here (a channel, a profile) and proposed for the team: reach.ts. */
  proposed?: boolean;
  /** Held by the safety screen, with its reason: written "held", shown nowhere until released. */
  held?: string;
  /** How a new entry came to be in this batch. */
  action?: "add" | "replace" | "remove";
  /** Who wrote an existing entry (MemoryEntry.source). */
  source?: string;
  id: string | null;
  kind: MemoryKind;
  text: string;
  original: string | null;
  removed: boolean;
}
