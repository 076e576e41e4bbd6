/**
 * Closing an entry's interval of validity (validity.ts), inside the caller's transaction: the two
 * ways a text stops being in force without being deleted.
 * - `keepReplaced`: a replace changes an entry's text in place (its id is what traces, proposals
 *   and people hold); the text it had is kept as a row of its own, superseded by the entry.
 * - `supersede`: another entry takes this one's place (a pending change confirmed, a proposal
 *   shared over a team entry, a rule over a rule, a contradiction settled): this row is closed.
 * Both leave the old text readable by the history tool and the views, and in no prompt.
 */
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { SUPERSEDED } from "./validity.ts";

/** Keeps `old` (the row as it was before its text changed at `at`) as a superseded row naming it. */
export async function keepReplaced(tx: Tx, old: MemoryEntry, at: Date): Promise<void> {
  await tx.memoryEntry.create({
    data: {
      workspaceId: old.workspaceId,
      scope: old.scope,
      ownerId: old.ownerId,
      channelKey: old.channelKey,
      text: old.text,
      kind: old.kind,
      quote: old.quote,
      origin: old.origin,
      status: SUPERSEDED,
      confidence: old.confidence,
      source: old.source,
      createdById: old.createdById,
      sourceMessageId: old.sourceMessageId,
      scannedWith: old.scannedWith,
      createdAt: old.createdAt,
      validFrom: old.validFrom ?? old.createdAt,
      validUntil: at,
      supersededById: old.id,
      verifiedAt: old.verifiedAt,
      verifiedById: old.verifiedById,
    },
  });
}

/**
 * Closes an active entry: superseded by `byId` from `at`, with a revision (action `action`, the old
 * text kept). False when it was no longer active (someone settled it first): nothing written.
 */
export async function supersede(tx: Tx, old: Pick<MemoryEntry, "id" | "workspaceId" | "text">, byId: string, at: Date, prov: Provenance, action = "supersede", newText: string | null = null): Promise<boolean> {
  const r = await tx.memoryEntry.updateMany({
    where: { id: old.id, workspaceId: old.workspaceId, status: "active" },
    data: { status: SUPERSEDED, validUntil: at, supersededById: byId, conflictWithId: null },
  });
  if (r.count !== 1) return false;
  await writeRevision(tx, { workspaceId: old.workspaceId, entityType: "memory", entityId: old.id, action, oldText: old.text, newText }, prov);
  return true;
}
