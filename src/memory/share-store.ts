/**
 * Entries asked for the team and kept where they were said (reach.ts): found, shared with the whole
 * workspace once a teammate approves (learning/shares.ts judges who may), or declined.
 *
 * Invariants kept here:
 * - A proposal changes state once: every update is conditional on it still being an open proposal,
 *   so two approvals racing share it once.
 * - Sharing spends the team's budget like any team write; a proposal that would overflow it is refused.
 * - A proposal replacing a team entry shares only while that entry is in force: otherwise it would
 *   overwrite, or bring back, what someone changed since.
 * - Every step is a revision naming who did it.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance } from "../db/revisions.ts";
import type { WorkspaceScope } from "../ground/types.ts";
import { kindOf, LESSON_LIMITS, MemoryError, usedChars, type MemoryBudgets } from "./entries.ts";
import type { MemoryStore } from "./store.ts";
import { supersede } from "./supersede-store.ts";

export type ShareOutcome = { kind: "shared"; entry: MemoryEntry } | { kind: "closed" } | { kind: "stale" };

const OPEN = { status: "active", proposedScope: "team" } as const;
/** Held by the safety screen: written where it was asked to go, released by a person (`release`). */
const HELD = { status: "held", proposedScope: { not: null } } as const;
/** Either kind of proposal a teammate judges. */
const JUDGED = { OR: [OPEN, HELD] };
const NEWEST = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/** The proposals a viewer reading `channels` may see (`waiting`; short ids are looked up through it too). */
export function waitingWhere(channels: ReadonlySet<string>) {
  const where = [{ scope: "channel", channelKey: { in: [...channels] } }, { scope: "user" }];
  // Held team writes are judged by anyone in the workspace; held channel writes by who reads the channel.
  const held = [{ scope: "team" }, { scope: "channel", channelKey: { in: [...channels] } }];
  return { OR: [{ ...OPEN, OR: where }, { ...HELD, OR: held }] };
}

export class ShareStore {
  constructor(
    private readonly db: Db,
    private readonly memory: Pick<MemoryStore, "forgetCached">,
    private readonly budgets: MemoryBudgets,
  ) {}

  /** The workspace's entry with this id, if it is or was a proposal for the team (one settled is judged "closed"). */
  async find(scope: WorkspaceScope, id: string): Promise<MemoryEntry | null> {
    const entry = await this.db.memoryEntry.findFirst({ where: { id, workspaceId: scope.workspaceId } });
    if (!entry || entry.proposedScope !== null) return entry;
    const settled = await this.db.revision.count({ where: { workspaceId: scope.workspaceId, entityType: "memory", entityId: id, action: { in: ["share", "decline_share", "drop_proposal"] } } });
    return settled > 0 && entry.kind !== "rule" ? entry : null;
  }

  /** Open proposals made by one person message (a ✅ on cairn's reply to it shares them). */
  async proposedFrom(scope: WorkspaceScope, sourceMessageId: number): Promise<MemoryEntry[]> {
    return this.db.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, sourceMessageId, ...JUDGED }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /**
   * Open proposals a viewer may see: those kept in the channels they can read, and those asked from
   * a DM (the person asked for the whole team to see them; no one else can approve them otherwise).
   */
  async waiting(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<MemoryEntry[]> {
    return this.db.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, ...waitingWhere(channels) }, orderBy: NEWEST });
  }

  /** Moves an open proposal to the team, or releases a held write where it was asked to go. Throws MemoryError when there is no room for it. */
  async share(entry: MemoryEntry, prov: Provenance): Promise<ShareOutcome> {
    if (entry.status === "held") return this.release(entry, prov);
    const outcome = await this.db.$transaction(async (tx): Promise<ShareOutcome> => {
      const row = await tx.memoryEntry.findFirst({ where: { id: entry.id, workspaceId: entry.workspaceId, ...OPEN } });
      if (!row) return { kind: "closed" };
      const old = row.replacesId === null ? null : await tx.memoryEntry.findFirst({ where: { id: row.replacesId, workspaceId: row.workspaceId, scope: "team", status: "active" } });
      if (row.replacesId !== null && !old) {
        await tx.memoryEntry.updateMany({ where: { id: row.id, ...OPEN }, data: { proposedScope: null } });
        await writeRevision(tx, { workspaceId: row.workspaceId, entityType: "memory", entityId: row.id, action: "drop_proposal", oldText: row.text, newText: row.text }, { ...prov, reason: "the team entry it would replace was changed or removed since" });
        return { kind: "stale" };
      }
      const team = await tx.memoryEntry.findMany({ where: { workspaceId: row.workspaceId, scope: "team", status: "active" } });
      const rest = team.filter((e) => e.id !== old?.id);
      ensureRoom(row, rest, "team", this.budgets.team);
      const at = prov.at ?? new Date();
      // Valid for the team from now: where it was kept before is its history, not the team's.
      const won = await tx.memoryEntry.updateMany({ where: { id: row.id, ...OPEN }, data: { scope: "team", ownerId: null, channelKey: null, proposedScope: null, replacesId: null, validFrom: at } });
      if (won.count !== 1) return { kind: "closed" };
      if (old) await supersede(tx, old, row.id, at, { ...prov, reason: `replaced by shared entry ${row.id}` }, "replace", row.text);
      await writeRevision(tx, { workspaceId: row.workspaceId, entityType: "memory", entityId: row.id, action: "share", oldText: null, newText: row.text }, { ...prov, reason: prov.reason ?? `shared from ${row.scope}` });
      return { kind: "shared", entry: { ...row, scope: "team", ownerId: null, channelKey: null, proposedScope: null, replacesId: null } };
    });
    if (outcome.kind !== "closed") this.memory.forgetCached();
    return outcome;
  }

  /** A held write made active where it was asked to go (its scope already), once its budget has room. */
  private async release(entry: MemoryEntry, prov: Provenance): Promise<ShareOutcome> {
    const outcome = await this.db.$transaction(async (tx): Promise<ShareOutcome> => {
      const row = await tx.memoryEntry.findFirst({ where: { id: entry.id, workspaceId: entry.workspaceId, ...HELD } });
      if (!row) return { kind: "closed" };
      const target = row.scope as keyof MemoryBudgets;
      const peers = await tx.memoryEntry.findMany({ where: { workspaceId: row.workspaceId, scope: row.scope, channelKey: row.channelKey, ownerId: row.ownerId, status: "active" } });
      ensureRoom(row, peers, target, this.budgets[target]);
      const won = await tx.memoryEntry.updateMany({ where: { id: row.id, ...HELD }, data: { status: "active", proposedScope: null } });
      if (won.count !== 1) return { kind: "closed" };
      await writeRevision(tx, { workspaceId: row.workspaceId, entityType: "memory", entityId: row.id, action: "release", oldText: null, newText: row.text }, { ...prov, reason: prov.reason ?? "released after the safety screen held it" });
      return { kind: "shared", entry: { ...row, status: "active", proposedScope: null } };
    });
    if (outcome.kind !== "closed") this.memory.forgetCached();
    return outcome;
  }

  /** A rejection: the entry stays where it was said, no longer proposed (a held one is archived). False when it was settled already. */
  async decline(entry: MemoryEntry, prov: Provenance): Promise<boolean> {
    if (entry.status === "held") return this.archiveHeld(entry, prov);
    const done = await this.db.$transaction(async (tx) => {
      const r = await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, ...OPEN }, data: { proposedScope: null } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "decline_share", oldText: entry.text, newText: entry.text }, prov);
      return true;
    });
    if (done) this.memory.forgetCached();
    return done;
  }

  private async archiveHeld(entry: MemoryEntry, prov: Provenance): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      const r = await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, ...HELD }, data: { status: "archived", proposedScope: null } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "reject_held", oldText: entry.text, newText: null }, prov);
      return true;
    });
    if (done) this.memory.forgetCached();
    return done;
  }
}

/**
 * Whether `row` fits beside the entries already in force where it goes: a lesson against the lesson
 * cap, a fact against the target's budget. Throws MemoryError (nothing was changed) when it does not.
 */
function ensureRoom(row: MemoryEntry, inForce: readonly MemoryEntry[], target: string, limit: number): void {
  if (kindOf(row) === "lesson") {
    if (inForce.filter((e) => kindOf(e) === "lesson").length >= LESSON_LIMITS.perTarget) throw new MemoryError(`${target} memory holds ${LESSON_LIMITS.perTarget} lessons, its cap: consolidate its lessons first`);
    return;
  }
  const used = usedChars([...inForce.filter((e) => kindOf(e) !== "lesson").map((e) => e.text), row.text]);
  if (used > limit) throw new MemoryError(`${target} memory would hold ${used}/${limit} chars with it; consolidate it first`);
}
