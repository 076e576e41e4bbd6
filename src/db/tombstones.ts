/**
 * The check every store makes, inside its own transaction, before it writes an entry's text back:
 * was this forgotten at a person's request? A tombstone (src/erasure/tombstone-store.ts writes
 * them) holds a hash of the forgotten text, normalised, never the text. A text is refused when it,
 * or one of its sentences (a curator merge joins entries), hashes the same; and a write that comes
 * from a message whose author asked to be forgotten after sending it is refused whole (a review of
 * an old conversation). Kept here, below the stores, as revisions.ts is: every store may call it.
 */
import { createHash } from "node:crypto";
import { UserFacingError } from "../ground/errors.ts";
import type { Tx } from "./revisions.ts";

export const TOMBSTONE_KINDS = ["entry", "person", "listen_person", "listen_channel"] as const;
export type TombstoneKind = (typeof TOMBSTONE_KINDS)[number];

/** Case, spacing, Unicode forms and trailing punctuation do not make a forgotten text new. */
export function normaliseForgotten(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim().replace(/[.!?;:,\s]+$/, "");
}

export function forgottenHash(text: string): string {
  return createHash("sha256").update(normaliseForgotten(text), "utf8").digest("hex");
}

/** The hashes a written text is checked by: the whole, and each sentence, clause after a colon, or line of it. */
function hashesOf(text: string): Map<string, string> {
  const parts = [text, ...text.split(/(?<=[.!?])\s+|\n+|[;:]\s+/)].map((p) => p.trim()).filter((p) => normaliseForgotten(p).length > 0);
  return new Map(parts.map((p) => [forgottenHash(p), p]));
}

/** What a write ran into: an entry forgotten (its text as the writer gave it), or a forgotten author. */
export type Forgotten = { kind: "entry"; at: Date; text: string } | { kind: "person"; at: Date };

const day = (d: Date): string => d.toISOString().slice(0, 10);

/** Said to the model (or a person) when a write is refused: what, since when, what to do. */
export function forgottenMessage(f: Forgotten): string {
  if (f.kind === "person") {
    return `This comes from a message whose author asked cairn to forget them on ${day(f.at)}; not saved. Nothing in this batch was saved, and nothing from their earlier messages may be.`;
  }
  return `This was forgotten on ${day(f.at)} at a person's request; not saved ("${f.text}"). Nothing in this batch was saved: leave it out, do not save it again in other words, and retry the rest if there is any.`;
}

/** A write refused because its text (or its source) was forgotten. */
export class ForgottenError extends UserFacingError {
  override name = "ForgottenError";
  constructor(readonly forgotten: Forgotten) {
    super(forgottenMessage(forgotten));
  }
}

/**
 * The first of these texts forgotten in the workspace, or the forgotten author of the message the
 * write comes from; null when the write may go ahead.
 */
export async function forgottenAmong(tx: Tx, workspaceId: string, texts: readonly string[], sourceMessageId: number | null = null): Promise<Forgotten | null> {
  if (sourceMessageId !== null) {
    const source = await tx.message.findFirst({ where: { id: sourceMessageId, workspaceId }, select: { authorId: true, createdAt: true } });
    if (source?.authorId) {
      const gone = await tx.tombstone.findFirst({ where: { workspaceId, kind: "person", personId: source.authorId, createdAt: { gte: source.createdAt } }, orderBy: { createdAt: "asc" } });
      if (gone) return { kind: "person", at: gone.createdAt };
    }
  }
  const hashes = new Map<string, string>();
  for (const t of texts) for (const [h, part] of hashesOf(t)) if (!hashes.has(h)) hashes.set(h, part);
  if (hashes.size === 0) return null;
  const hit = await tx.tombstone.findFirst({ where: { workspaceId, kind: "entry", contentHash: { in: [...hashes.keys()] } }, orderBy: { createdAt: "asc" } });
  return hit?.contentHash ? { kind: "entry", at: hit.createdAt, text: hashes.get(hit.contentHash)! } : null;
}

/**
 * Throws when forgottenAmong finds something: a ForgottenError, or the caller's own error (the
 * memory store's, which its callers expect) with the same message. No texts: nothing to check.
 */
export async function refuseForgotten(tx: Tx, workspaceId: string, texts: readonly string[], sourceMessageId: number | null = null, asError?: (message: string) => Error): Promise<void> {
  if (texts.length === 0) return;
  const hit = await forgottenAmong(tx, workspaceId, texts, sourceMessageId);
  if (hit) throw asError ? asError(forgottenMessage(hit)) : new ForgottenError(hit);
}
