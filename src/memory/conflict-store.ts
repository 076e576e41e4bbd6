/**
 * Contradictions between entries in force (issue 27): the entries a new one may contradict, and
 * the three ways a pair is settled. A model only nominates (learning/contradictions.ts); what
 * happens is decided here and in the service, and nothing is deleted:
 * - superseded at once: the older entry is closed (supersede-store.ts), its text kept;
 * - marked: all stay in force, waiting for a person. The newest claim heads a dispute: each older
 *   entry it contradicts names it (`conflictWithId`), and it names the first of them. An older entry
 *   already heading a dispute of its own brings its members along (one question, not a chain of
 *   them). A person says which is right: keep new (the olders are superseded by the head), keep
 *   old (the head is closed; olders that disagree among themselves stay disputed under the newest
 *   of them), keep both (different scopes, all hold; the marks go).
 * Every step is a revision; the older entry's closing is undone by `/cairn rollback`.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import type { Scope } from "../ground/types.ts";
import { docKeys } from "../history/text.ts";
import type { MemoryStore } from "./store.ts";
import { supersede } from "./supersede-store.ts";
import { sinceOf } from "./validity.ts";
import { visibleWhere } from "./where.ts";

export type { MemoryEntry };
export type Verdict = "new" | "old" | "both";

/** A dispute waiting for a person: the newest claim and the older entries it contradicts (`older`: the first, for wording). */
export interface ConflictPair {
  newer: MemoryEntry;
  older: MemoryEntry;
  olders: MemoryEntry[];
}

/**
 * Entries compared with a new one, at most: the ones sharing the most words with it. Twelve short
 * lines are a small call, and room enough for a subject's own older values beside entries that
 * share its other words (the same service, the same weekday) in the fact-update bench.
 */
export const NEIGHBOURS = 12;

const rev = (e: MemoryEntry, action: string, oldText: string | null, newText: string | null) =>
  ({ workspaceId: e.workspaceId, entityType: "memory", entityId: e.id, action, oldText, newText }) as const;

export class ConflictStore {
  constructor(
    private readonly db: Db,
    private readonly memory: Pick<MemoryStore, "forgetCached">,
  ) {}

  /** An entry of the workspace by id, any status. */
  entry(workspaceId: string, id: string): Promise<MemoryEntry | null> {
    return this.db.memoryEntry.findFirst({ where: { id, workspaceId } });
  }

  /**
   * Active entries a new one may contradict, the ones sharing most words first: a profile entry
   * against the same person's profile; a channel or team entry against the team's and the channel
   * it was said in (`channelKey`; none from a DM). Only entries every reader of that place sees, so
   * the question asked there shows nobody what they could not read.
   */
  async neighbours(entry: MemoryEntry, channelKey: string | null): Promise<MemoryEntry[]> {
    const places =
      entry.scope === "user"
        ? [{ scope: "user", ownerId: entry.ownerId }]
        : [{ scope: "team" }, ...((entry.scope === "channel" ? entry.channelKey : channelKey) ? [{ scope: "channel", channelKey: entry.scope === "channel" ? entry.channelKey : channelKey }] : [])];
    const rows = await this.db.memoryEntry.findMany({ where: { workspaceId: entry.workspaceId, status: "active", id: { not: entry.id }, OR: places }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 1_000 });
    const keys = new Set(docKeys(entry.text));
    return rows
      .map((r) => ({ r, n: new Set(docKeys(r.text).filter((k) => keys.has(k))).size }))
      .filter((x) => x.n > 0)
      .sort((a, b) => b.n - a.n)
      .slice(0, NEIGHBOURS)
      .map((x) => x.r);
  }

  /** Closes `older` at once, superseded by `newer` (same scope, same author or an admin). False when either moved on. */
  async supersede(older: MemoryEntry, newer: MemoryEntry, prov: Provenance): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      if (!(await this.stillActive(tx, newer))) return false;
      return supersede(tx, older, newer.id, prov.at ?? new Date(), prov, "supersede", newer.text);
    });
    if (done) this.memory.forgetCached();
    return done;
  }

  /**
   * Marks `olders` as contradicted by `newer`, which heads the dispute. False when `newer` moved on
   * or is in a dispute already, or none of the olders is still in force.
   */
  async mark(olders: readonly MemoryEntry[], newer: MemoryEntry, prov: Provenance): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      const head = await tx.memoryEntry.findFirst({ where: { id: newer.id, workspaceId: newer.workspaceId, status: "active", conflictWithId: null } });
      if (!head) return false;
      let first: MemoryEntry | null = null;
      for (const older of olders) {
        const row = await tx.memoryEntry.findFirst({ where: { id: older.id, workspaceId: older.workspaceId, status: "active" } });
        if (!row) continue;
        // Its dispute so far, if any: the entry it names either heads it, or (named back, and older) is its first member.
        const other = row.conflictWithId ? await tx.memoryEntry.findFirst({ where: { id: row.conflictWithId } }) : null;
        const headed = other !== null && other.conflictWithId === row.id && isNewer(row, other);
        // Members of a dispute this older entry headed join the new one: one question settles them all.
        if (headed) await tx.memoryEntry.updateMany({ where: { workspaceId: row.workspaceId, status: "active", conflictWithId: row.id, id: { not: newer.id } }, data: { conflictWithId: newer.id } });
        await tx.memoryEntry.update({ where: { id: row.id }, data: { conflictWithId: newer.id } });
        // A member moved out of another dispute: its head names another member, or is no longer disputed.
        if (other && !headed && other.conflictWithId === row.id) {
          const left = await tx.memoryEntry.findFirst({ where: { workspaceId: other.workspaceId, status: "active", conflictWithId: other.id, id: { not: other.id } }, select: { id: true } });
          await tx.memoryEntry.update({ where: { id: other.id }, data: { conflictWithId: left?.id ?? null } });
        }
        first ??= older;
        await writeRevision(tx, rev(older, "conflict", older.text, newer.text), prov);
      }
      if (!first) return false;
      await tx.memoryEntry.update({ where: { id: newer.id }, data: { conflictWithId: first.id } });
      await writeRevision(tx, rev(head, "conflict", newer.text, first.text), prov);
      return true;
    });
    if (done) this.memory.forgetCached();
    return done;
  }

  /** The post that asked which is right: kept on the newer entry (a reminder answers in its thread). */
  async asked(newer: MemoryEntry, postId: number): Promise<void> {
    await this.db.memoryEntry.updateMany({ where: { id: newer.id, workspaceId: newer.workspaceId }, data: { conflictPostId: postId } });
  }

  /**
   * The open dispute one of whose entries has this id, when the reader may see every entry of it;
   * null otherwise (what a place cannot read is not settled from there).
   */
  async pair(scope: Scope, id: string): Promise<ConflictPair | null> {
    const one = await this.db.memoryEntry.findFirst({ where: { id, workspaceId: scope.workspaceId, status: "active", conflictWithId: { not: null } } });
    if (!one?.conflictWithId) return null;
    const other = await this.db.memoryEntry.findFirst({ where: { id: one.conflictWithId, workspaceId: scope.workspaceId, status: "active" } });
    if (!other) return null;
    // The head names one of its olders, and they name it back; an older names the head only.
    const head = other.conflictWithId === one.id ? (isNewer(one, other) ? one : other) : other;
    const members = await this.db.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, status: "active", conflictWithId: head.id, id: { not: head.id } }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    const ids = [head.id, ...members.map((m) => m.id)];
    const readable = await this.db.memoryEntry.count({ where: { AND: [visibleWhere(scope), { id: { in: ids } }] } });
    if (readable !== ids.length || members.length === 0) return null;
    return { newer: head, older: members.find((m) => m.id === head.conflictWithId) ?? members[0]!, olders: members };
  }

  /** Open disputes every entry of which a place may read, newest first (for views). */
  async open(scope: Scope): Promise<ConflictPair[]> {
    const rows = await this.db.memoryEntry.findMany({ where: { AND: [visibleWhere(scope), { conflictWithId: { not: null } }] }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    const out = new Map<string, ConflictPair>();
    // Disputes are few and short-lived: one read per entry in one is cheap, and reads them as `pair` does.
    for (const r of rows) {
      if ([...out.values()].some((p) => p.newer.id === r.id || p.olders.some((o) => o.id === r.id))) continue;
      const p = await this.pair(scope, r.id);
      if (p) out.set(p.newer.id, p);
    }
    return [...out.values()];
  }

  /** A person's answer. False when the dispute was settled already (by someone else, or a change). */
  async resolve(pair: ConflictPair, verdict: Verdict, prov: Provenance): Promise<boolean> {
    const at = prov.at ?? new Date();
    const done = await this.db.$transaction(async (tx) => {
      const { newer, olders } = pair;
      const open = await tx.memoryEntry.count({ where: { OR: [{ id: newer.id }, ...olders.map((o) => ({ id: o.id, conflictWithId: newer.id }))], status: "active", conflictWithId: { not: null } } });
      if (open !== olders.length + 1) return false;
      const all = [newer, ...olders];
      await tx.memoryEntry.updateMany({ where: { id: { in: all.map((e) => e.id) } }, data: { conflictWithId: null } });
      if (verdict === "both") {
        for (const e of all) await writeRevision(tx, rev(e, "keep_both", null, null), prov);
        return true;
      }
      if (verdict === "new") {
        await tx.memoryEntry.updateMany({ where: { id: newer.id }, data: { verifiedAt: at, verifiedById: prov.actorId } });
        await writeRevision(tx, rev(newer, "keep_new", null, newer.text), prov);
        // Each older is closed, superseded by the head; its revision is what rollback undoes.
        for (const o of olders) await supersede(tx, o, newer.id, at, prov, "supersede", newer.text);
        return true;
      }
      const kept = [...olders].sort((a, b) => (isNewer(a, b) ? -1 : 1));
      for (const o of kept) await writeRevision(tx, rev(o, "keep_old", null, o.text), prov);
      if (!(await supersede(tx, newer, kept[0]!.id, at, prov, "keep_old", kept[0]!.text))) return false;
      // Olders that disagreed among themselves stay disputed, under the newest of them.
      if (kept.length > 1) {
        await tx.memoryEntry.updateMany({ where: { id: { in: kept.slice(1).map((o) => o.id) } }, data: { conflictWithId: kept[0]!.id } });
        await tx.memoryEntry.update({ where: { id: kept[0]!.id }, data: { conflictWithId: kept[1]!.id } });
      }
      return true;
    });
    if (done) this.memory.forgetCached();
    return done;
  }

  private async stillActive(tx: Tx, e: MemoryEntry): Promise<boolean> {
    return (await tx.memoryEntry.count({ where: { id: e.id, workspaceId: e.workspaceId, status: "active" } })) === 1;
  }
}

/** `a` came into force after `b` (ids break ties, so both sides agree). */
function isNewer(a: MemoryEntry, b: MemoryEntry): boolean {
  const d = sinceOf(a).getTime() - sinceOf(b).getTime();
  return d > 0 || (d === 0 && a.id > b.id);
}
