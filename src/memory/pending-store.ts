/**
 * Confirming pending entries: what a person proposed from a DM for the team, and what a review of
 * their conversation held for them (see MemoryStore.apply's `review` option). The memory store's
 * other half: it writes inside the store's transaction (MemoryStore.confirm), and nothing else calls it.
 *
 * Invariants kept here:
 * - A pending entry changes state once: every update is conditional on the state it was read in,
 *   so two confirmations racing apply it once.
 * - Nothing is deleted: a replaced or removed entry is archived, with a revision naming the change.
 * - A pending replacement whose entry is no longer active is dropped, not applied: it would bring
 *   back, or overwrite, what someone changed since. So is a pending text forgotten since.
 */
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { forgottenAmong } from "../db/tombstones.ts";
import type { MemoryTarget } from "../ground/types.ts";
import { kindOf, MemoryError, usedChars, type MemoryBudgets } from "./entries.ts";
import { supersede } from "./supersede-store.ts";

/** Applies the pending rows (already read as this person's); the ones that took effect. */
export async function confirmPending(tx: Tx, rows: readonly MemoryEntry[], budgets: MemoryBudgets, prov: Provenance): Promise<MemoryEntry[]> {
  if (rows.length === 0) return [];
  const workspaceId = rows[0]!.workspaceId;
  const targets = [...new Set(rows.flatMap((r) => (r.replacesId ? [r.replacesId] : [])))];
  const active = new Set((await tx.memoryEntry.findMany({ where: { id: { in: targets }, workspaceId, status: "active" }, select: { id: true } })).map((e) => e.id));
  await checkBudgets(tx, workspaceId, rows.filter((r) => r.replacesId === null || active.has(r.replacesId)), budgets);
  const done: MemoryEntry[] = [];
  for (const row of rows) {
    const old = row.replacesId === null ? null : await tx.memoryEntry.findFirst({ where: { id: row.replacesId, workspaceId, status: "active" } });
    if (row.replacesId !== null && !old) {
      const dropped = await tx.memoryEntry.updateMany({ where: { id: row.id, status: "pending" }, data: { status: "archived" } });
      if (dropped.count) await writeRevision(tx, rev(row, "drop", row.text, null), { ...prov, reason: "the entry it would change was changed or removed since" });
      continue;
    }
    // Forgotten since it was proposed (erasure/tombstone-store.ts): dropped, never made active.
    if (row.text && (await forgottenAmong(tx, workspaceId, [row.text]))) {
      const dropped = await tx.memoryEntry.updateMany({ where: { id: row.id, status: "pending" }, data: { status: "archived" } });
      if (dropped.count) await writeRevision(tx, rev(row, "drop", row.text, null), { ...prov, reason: "forgotten at a person's request" });
      continue;
    }
    // An empty text is a removal: the marker is archived with the entry it removes.
    const won = await tx.memoryEntry.updateMany({ where: { id: row.id, status: "pending" }, data: { status: row.text ? "active" : "archived" } });
    if (won.count !== 1) continue;
    // A proposal for the team (reach.ts) replaces its team entry only once a teammate shares it (share-store.ts).
    if (old && row.proposedScope === null) {
      const why = { ...prov, reason: prov.reason ?? `confirmed change ${row.id}` };
      if (row.text) {
        // The old text stays, closed and superseded by the confirmed entry (validity.ts).
        await supersede(tx, old, row.id, prov.at ?? new Date(), why, "replace", row.text);
      } else {
        await tx.memoryEntry.updateMany({ where: { id: old.id, status: "active" }, data: { status: "archived" } });
        await writeRevision(tx, rev(old, "remove", old.text, null), why);
      }
    }
    await writeRevision(tx, rev(row, "confirm", row.text, row.text), prov);
    done.push(row);
  }
  return done;
}

const rev = (e: MemoryEntry, action: string, oldText: string | null, newText: string | null) =>
  ({ workspaceId: e.workspaceId, entityType: "memory", entityId: e.id, action, oldText, newText }) as const;

/** Every target the rows change stays within its budget, or (over it already) does not grow. */
async function checkBudgets(tx: Tx, workspaceId: string, rows: readonly MemoryEntry[], budgets: MemoryBudgets): Promise<void> {
  const groups = new Map<string, MemoryEntry[]>();
  for (const r of rows) {
    const key = `${r.scope}|${r.ownerId ?? ""}|${r.channelKey ?? ""}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const hot = (entries: readonly MemoryEntry[]) => usedChars(entries.filter((e) => kindOf(e) !== "lesson").map((e) => e.text));
  for (const group of groups.values()) {
    const { scope, ownerId, channelKey } = group[0]!;
    const target = scope as MemoryTarget;
    const where = { workspaceId, scope, status: "active", ...(target === "user" ? { ownerId } : target === "channel" ? { channelKey } : {}) };
    const current = await tx.memoryEntry.findMany({ where });
    const gone = new Set(group.map((r) => r.replacesId));
    const before = hot(current);
    const after = hot([...current.filter((e) => !gone.has(e.id)), ...group]);
    const limit = budgets[target];
    if (after > limit && after > before) {
      throw new MemoryError(`Confirming would put ${target} memory at ${after}/${limit} chars. Ask cairn to consolidate ${target} memory first.`);
    }
  }
}
