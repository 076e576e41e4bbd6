/**
 * Turn order: a history entry belongs to the turn of a person's message (its own, the one a reply
 * answers, or the one a context block preceded). Messages queued in a busy conversation are stored
 * before the replies to the ones ahead of them, so history is read in turn order, not id order.
 */

/** What turn order reads of a stored message. */
export interface TurnEntry {
  id: number;
  role: string;
  replyToId: number | null;
}

/** The id of the person message a history entry belongs to. */
export function turnOf(m: TurnEntry): number {
  return m.role !== "user" && m.replyToId !== null ? m.replyToId : m.id;
}

/** Within a turn: the context block, then the person's message, then cairn's reply. */
const ROLE_ORDER: Record<string, number> = { context: 0, user: 1, assistant: 2 };

export function sortByTurn<T extends TurnEntry>(rows: T[]): T[] {
  return [...rows].sort((a, b) => turnOf(a) - turnOf(b) || (ROLE_ORDER[a.role] ?? 1) - (ROLE_ORDER[b.role] ?? 1) || a.id - b.id);
}
