/**
 * Every change to a memory entry or a skill leaves a revision: old text, new text, who, why and
 * from which message. Written inside the same transaction as the change it records.
 */
import type { Prisma } from "./generated/sqlite/client.ts";
import type { ProvenanceSource } from "../ground/types.ts";

export type Tx = Prisma.TransactionClient;

/** Who caused a change and through what: carried from the tool call, review, reaction or import. */
export interface Provenance {
  source: ProvenanceSource;
  actorId: string | null;
  sourceMessageId: number | null;
  reason?: string | null;
  /** The run (a curator run, a job) that made the change: history lists a run's changes by it. */
  runId?: string | null;
  /** When the change was made, from the caller's clock; the database's clock when absent. */
  at?: Date;
}

export interface RevisionInput {
  workspaceId: string | null;
  entityType: "memory" | "skill" | "persona";
  entityId: string;
  action: string;
  path?: string | null;
  oldText: string | null;
  newText: string | null;
}

/** Writes the revision; its id back (what `/cairn rollback` takes). */
export async function writeRevision(tx: Tx, rev: RevisionInput, prov: Provenance): Promise<string> {
  const row = await tx.revision.create({
    data: {
      workspaceId: rev.workspaceId,
      entityType: rev.entityType,
      entityId: rev.entityId,
      action: rev.action,
      path: rev.path ?? null,
      oldText: rev.oldText,
      newText: rev.newText,
      actorId: prov.actorId,
      reason: prov.reason ?? null,
      source: prov.source,
      sourceMessageId: prov.sourceMessageId,
      runId: prov.runId ?? null,
      ...(prov.at ? { createdAt: prov.at } : {}),
    },
    select: { id: true },
  });
  return row.id;
}
