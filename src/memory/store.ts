/**
 * Profiles (target `user`), channel memory and team memory.
 *
 * Invariants kept here:
 * - Every read takes a Scope; the WHERE clause built from it is the only way entries are found, so a
 *   person's `user` entries reach only that person, `channel` entries only that channel, and nothing
 *   crosses workspaces.
 * - A batch of operations is applied all-or-nothing, inside one transaction, with a revision per change.
 * - A team write reaches the workspace only when its writer may share alone (reach.ts); anyone
 *   else's is kept where it was said, proposed for the team (share-store.ts moves it there).
 * - Errors are written for the model: they say exactly what to do next.
 */
import type { Database, Db } from "../db/client.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";

export type { MemoryEntry };
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { refuseForgotten } from "../db/tombstones.ts";
import type { MemoryTarget, PersonScope, Scope, WorkspaceScope } from "../ground/types.ts";
import { RULES_VERSION } from "../safety/scanner.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import { confirmPending } from "./pending-store.ts";
import { confirmableWhere, pendingWhere, targetWhere, visibleWhere } from "./where.ts";
import { VisibleEntryStore } from "./visible-store.ts";
import { heldLine, hereOf, pendingLine, proposedLine, WORKSPACE_REACH, type ReachOf } from "./reach.ts";
import { keepReplaced } from "./supersede-store.ts";
import { disputedIds } from "./validity.ts";
import { cleanForWrite, displayEntry, grouped, kindOf, LESSON_LIMITS, listEntries, MemoryError, normalize, TARGETS, usedChars, type ApplyOptions, type ApplyOutcome, type MemoryBudgets, type MemoryKind, type MemoryOp, type Working } from "./entries.ts";

// What services import with the store: the vocabulary of entries (entries.ts) and the revision's provenance.
export { budgetHeader, budgetWords, displayEntry, kindOf, LESSON_LIMITS, MemoryError, TARGETS, usedChars, type ApplyOptions, type ApplyOutcome, type MemoryBudgets, type MemoryKind, type MemoryOp } from "./entries.ts";
export type { Provenance };
export { pendingWhere, targetWhere, visibleWhere };
export type { ReachOf, TeamReach } from "./reach.ts";

export interface MemoryBlock {
  target: MemoryTarget;
  entries: MemoryEntry[];
  used: number;
  limit: number;
  /** Entries shown as disputed (validity.ts disputedIds): the older of a contradicting pair. */
  disputed?: ReadonlySet<string>;
}

function lessonKey(scope: Scope): string {
  return `${scope.workspaceId}|${scope.isDm ? "@dm" : scope.channelKey}|${scope.personId}`;
}

/**
 * Lessons are read on every message. The lessons a place may see are reused for this long; writes
 * through this store drop their workspace's entries at once, so only another replica's writes (and
 * erasures, see forgetCached) take up to this long to show.
 */
const LESSON_CACHE_TTL_MS = 30_000;

export class MemoryStore {
  private readonly lessonCache = new TtlCache<string, MemoryEntry[]>({ ttlMs: LESSON_CACHE_TTL_MS, max: 5_000 });
  /** Counts writes, so a read that raced a write is not cached. */
  private writes = 0;

  /** The read below Prisma of what a place may see, where the core gives it the database (visible-store.ts). */
  private readonly direct: VisibleEntryStore | undefined;

  constructor(
    private readonly db: Db,
    private readonly budgets: MemoryBudgets,
    /** How far a person's team writes reach alone (admission/trust.ts): asked once per batch with a team write. */
    private readonly reachOf: ReachOf = WORKSPACE_REACH,
    private readonly now: () => Date = () => new Date(),
    /** Where given, `visible` reads below Prisma (visible-store.ts): a session's first turn reads every entry of its place. */
    direct?: Pick<Database, "direct" | "provider">,
  ) {
    this.direct = direct && new VisibleEntryStore(direct);
  }

  /**
   * Told of entries that came into force (added or replaced, active): the contradiction check
   * (learning/contradictions.ts) is queued from here, after the write committed. Set by the top.
   */
  onLanded: ((workspaceId: string, ids: readonly string[]) => void) | null = null;

  limit(target: MemoryTarget): number {
    return this.budgets[target];
  }

  /** A target's active entries (facts and lessons), oldest first. */
  async entries(scope: Scope, target: MemoryTarget, tx: Tx = this.db): Promise<MemoryEntry[]> {
    return tx.memoryEntry.findMany({ where: targetWhere(scope, target), orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /** Every active entry a prompt in this place may draw on, in one read, oldest first. */
  async visible(scope: Scope, kind?: MemoryKind): Promise<MemoryEntry[]> {
    if (this.direct) return this.direct.read(scope, kind);
    return this.db.memoryEntry.findMany({ where: { ...visibleWhere(scope), ...(kind ? { kind } : {}) }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /** The active lessons this place may see (team, channel unless a DM, the person's own), oldest first. */
  async lessons(scope: Scope): Promise<MemoryEntry[]> {
    const hit = this.lessonCache.get(lessonKey(scope));
    if (hit) return hit;
    const before = this.writes;
    const rows = await this.visible(scope, "lesson");
    if (before === this.writes) this.lessonCache.set(lessonKey(scope), rows);
    return rows;
  }

  /**
   * The facts this place may see, for a snapshot, read together with its lessons (which are kept
   * for `lessons`): a session's first turn needs both, and one read serves.
   */
  async facts(scope: Scope): Promise<MemoryEntry[]> {
    const before = this.writes;
    const rows = await this.visible(scope);
    if (before === this.writes) this.lessonCache.set(lessonKey(scope), rows.filter((e) => kindOf(e) === "lesson"));
    // Facts and team rules: both are in every prompt.
    return rows.filter((e) => kindOf(e) !== "lesson");
  }

  private changed(workspaceId: string): void {
    this.writes++;
    this.lessonCache.deleteWhere((_, key) => key.startsWith(`${workspaceId}|`));
  }

  /** After entries were changed behind this store (an erasure, `forget <id>`). */
  forgetCached(): void {
    this.writes++;
    this.lessonCache.clear();
  }

  /** The fact blocks a prompt shows for this scope: team, then channel (not in DMs), then the person's profile. */
  async blocks(scope: Scope): Promise<MemoryBlock[]> {
    return this.blocksOf(scope, (await this.visible(scope)).filter((e) => kindOf(e) !== "lesson"));
  }

  /** `blocks` from entries already read (with `visible`); lessons among them are left out. */
  blocksOf(scope: Scope, rows: readonly MemoryEntry[]): MemoryBlock[] {
    const targets = TARGETS.filter((t) => !(t === "channel" && scope.isDm));
    const disputed = disputedIds(rows);
    return targets.map((target) => {
      const entries = rows.filter((e) => e.scope === target && kindOf(e) === "fact");
      // Team rules are shown apart (renderShared) but spend the team's budget like its facts.
      const rules = rows.filter((e) => e.scope === target && kindOf(e) === "rule");
      return { target, entries, used: usedChars([...entries, ...rules].map((e) => e.text)), limit: this.budgets[target], ...(disputed.size ? { disputed } : {}) };
    });
  }

  /** Which of these ids are the workspace's entries in force now (a reply's trace may name some since removed). */
  async activeIds(scope: WorkspaceScope, ids: readonly string[]): Promise<Set<string>> {
    const rows = ids.length ? await this.db.memoryEntry.findMany({ where: { id: { in: [...ids] }, workspaceId: scope.workspaceId, status: "active" }, select: { id: true } }) : [];
    return new Set(rows.map((r) => r.id));
  }

  /** Which of these messages taught something now in memory (the source of an entry not deleted). */
  async taughtBy(scope: WorkspaceScope, messageIds: readonly number[]): Promise<Set<number>> {
    if (messageIds.length === 0) return new Set();
    const rows = await this.db.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, sourceMessageId: { in: [...messageIds] } }, select: { sourceMessageId: true } });
    return new Set(rows.flatMap((r) => (r.sourceMessageId === null ? [] : [r.sourceMessageId])));
  }

  /** Entries waiting for this person's confirmation (all, or those of one message of theirs). */
  async pendingBy(scope: PersonScope, sourceMessageId?: number, tx: Tx = this.db): Promise<MemoryEntry[]> {
    return tx.memoryEntry.findMany({
      where: { ...confirmableWhere(scope), ...(sourceMessageId !== undefined ? { sourceMessageId } : {}) },
      orderBy: { createdAt: "asc" },
    });
  }

  /** Entries waiting for this person's confirmation that a post of cairn's announced (a review's notice). */
  async pendingAnnounced(scope: PersonScope, postId: number): Promise<MemoryEntry[]> {
    return this.db.memoryEntry.findMany({ where: { ...confirmableWhere(scope), proposalMessageId: postId }, orderBy: { createdAt: "asc" } });
  }

  /** The post of cairn's that told a person these pending entries wait for them (a review's notice): ✅ on it confirms them. */
  async markAnnounced(scope: WorkspaceScope, ids: readonly string[], postId: number): Promise<void> {
    if (ids.length === 0) return;
    // Pending entries are never cached (the lesson cache holds active lessons): nothing to drop.
    await this.db.memoryEntry.updateMany({ where: { id: { in: [...ids] }, workspaceId: scope.workspaceId, status: "pending" }, data: { proposalMessageId: postId } });
  }

  /**
   * The person confirms entries waiting for them (see pending-store.ts): a new entry becomes active, a
   * pending replacement takes the place of the entry it names. Ids that are not their pending
   * entries are passed over. Throws MemoryError if a target's budget would overflow.
   */
  async confirm(scope: PersonScope, ids: readonly string[], prov: Provenance): Promise<MemoryEntry[]> {
    const confirmed = await this.db.$transaction(async (tx) => {
      const rows = await tx.memoryEntry.findMany({ where: { id: { in: [...ids] }, ...confirmableWhere(scope) }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      return confirmPending(tx, rows, this.budgets, prov);
    });
    this.changed(scope.workspaceId);
    return confirmed;
  }

  /** Applies a batch: every operation succeeds or none is written. Throws MemoryError for the model. */
  async apply(scope: Scope, ops: readonly MemoryOp[], prov: Provenance, opts: ApplyOptions = {}): Promise<ApplyOutcome> {
    const review = opts.review === true;
    if (ops.length === 0) throw new MemoryError("No operations given: pass at least one {action, target, ...}.");
    if (scope.isDm && ops.some((op) => op.target === "channel")) {
      throw new MemoryError(
        "This is a direct message, which has no channel memory. Nothing was saved. Use target 'user' for this person's own profile, or 'team' for something the whole workspace should know.",
      );
    }
    // Reviews too: what a review holds for the person stays where it was said once confirmed, unless they may share alone.
    const reach = ops.some((op) => op.target === "team") ? await this.reachOf(scope) : "workspace";
    const outcome = await this.db.$transaction(async (tx) => {
      const work = new Map<MemoryTarget, Working[]>();
      const read = new Map<string, MemoryEntry>();
      const load = async (target: MemoryTarget) => {
        let w = work.get(target);
        if (!w) {
          const rows = await this.entries(scope, target, tx);
          for (const r of rows) read.set(r.id, r);
          w = rows.map((r) => ({ id: r.id, kind: kindOf(r), text: r.text, original: r.text, removed: false, source: r.source }));
          work.set(target, w);
        }
        return w;
      };
      const lines: string[] = [];
      for (const [i, op] of ops.entries()) {
        const w = await load(op.target);
        const live = w.filter((e) => !e.removed);
        const where = ops.length > 1 ? `Operation ${i + 1} (${op.action} ${op.target}): ` : "";
        if (op.action === "add") {
          if (!op.content.trim()) throw new MemoryError(`${where}content is empty. Nothing was saved.`);
          const clean = cleanForWrite(op.content.trim(), where);
          const text = clean.text;
          if (clean.note) lines.push(clean.note);
          const heldFor = opts.held?.get(i);
          if (heldFor !== undefined) {
            // Held by the screen: kept where it was asked to go, out of every prompt until released.
            w.push({ id: null, kind: op.kind ?? "fact", text, original: null, removed: false, action: "add", held: heldFor });
            continue;
          }
          const proposed = op.target === "team" && reach === "here";
          const into = proposed ? await load(hereOf(scope)) : w;
          if ([...live, ...into.filter((e) => !e.removed)].some((e) => normalize(e.text) === normalize(text))) {
            lines.push(`skipped duplicate in ${op.target}: "${text}" is already stored`);
            continue;
          }
          // Proposed already and still waiting for the person: a second proposal would only pile up.
          if (op.target === "team" && (await this.pendingBy(scope, undefined, tx)).some((e) => normalize(e.text) === normalize(text))) {
            lines.push(`skipped: "${text}" is already waiting for the person's confirmation`);
            continue;
          }
          const kind = op.kind ?? "fact";
          if (kind === "lesson" && text.length > LESSON_LIMITS.chars) {
            throw new MemoryError(`${where}a lesson holds at most ${LESSON_LIMITS.chars} chars (this one has ${text.length}). Nothing was saved. State the rule in one or two sentences.`);
          }
          // Said in a DM, or saved by a review, meant for the team: held until the person confirms, never shared silently.
          into.push({ id: null, kind, text, original: null, removed: false, action: "add", pending: op.target === "team" && (review || (scope.isDm && !proposed)), proposed });
          if (!proposed) lines.push(`added ${kind === "lesson" ? "lesson " : ""}to ${op.target}: "${text}"`);
          continue;
        }
        const needle = op.old_text.trim();
        if (!needle) throw new MemoryError(`${where}old_text is empty: give a substring of the entry to ${op.action}. Nothing was saved.`);
        // "id:<id>" selects an entry by id: the way to remove one shown as [BLOCKED] (its text is withheld).
        const byId = needle.startsWith("id:") ? needle.slice(3).trim() : null;
        // A review's pending change is not an entry yet: nothing else in the batch can change it.
        const candidates = live.filter((e) => e.replacesId === undefined);
        const hits = byId ? candidates.filter((e) => e.id === byId) : candidates.filter((e) => e.text.toLowerCase().includes(needle.toLowerCase()));
        if (hits.length === 0) {
          throw new MemoryError(
            `${where}no ${op.target} entry contains "${needle}". Nothing was saved. Current ${op.target} entries:\n${listEntries(live)}\nRetry with old_text copied from one of these.`,
          );
        }
        if (hits.length > 1) {
          throw new MemoryError(
            `${where}old_text "${needle}" matched ${hits.length} ${op.target} entries:\n${listEntries(hits)}\nNothing was saved. Retry with a longer old_text that appears in only one entry.`,
          );
        }
        const hit = hits[0]!;
        if (hit.kind === "rule") {
          throw new MemoryError(
            `${where}"${displayEntry(hit)}" is a team rule: rules change only when a person approves a correction (a ✅ on its proposal), and admins archive them with /cairn forget ${hit.id}. Nothing was saved.`,
          );
        }
        if (op.action === "replace" && opts.held?.has(i)) {
          throw new MemoryError(`${where}the safety screen held this change (${opts.held.get(i)}), and an entry is not changed by held text. Nothing was saved. Add it as a new entry instead, which a teammate can approve.`);
        }
        if (op.target === "team" && reach === "here" && op.action === "replace" && hit.id !== null) {
          // Changing what the whole workspace reads is a proposal too: kept here, replacing the team entry once approved.
          if (!op.content.trim()) throw new MemoryError(`${where}content is empty; to delete the entry use action 'remove'. Nothing was saved.`);
          const clean = cleanForWrite(op.content.trim(), where);
          if (clean.note) lines.push(clean.note);
          (await load(hereOf(scope))).push({ id: null, kind: hit.kind, text: clean.text, original: null, removed: false, action: "replace", replacesId: hit.id, pending: review, proposed: true });
          continue;
        }
        if (review && hit.id !== null && (op.target === "team" || hit.source !== "review")) {
          // A review may not change the team's memory, or what a person wrote, on its own: the change waits for the person.
          let text = "";
          if (op.action === "replace") {
            if (!op.content.trim()) throw new MemoryError(`${where}content is empty; to delete the entry use action 'remove'. Nothing was saved.`);
            const clean = cleanForWrite(op.content.trim(), where);
            if (clean.note) lines.push(clean.note);
            text = clean.text;
          }
          w.push({ id: null, kind: hit.kind, text, original: null, removed: false, action: op.action, pending: true, replacesId: hit.id });
          continue;
        }
        if (op.action === "remove") {
          hit.removed = true;
          lines.push(`removed from ${op.target}: "${displayEntry(hit)}"`);
        } else {
          if (!op.content.trim()) throw new MemoryError(`${where}content is empty; to delete the entry use action 'remove'. Nothing was saved.`);
          const clean = cleanForWrite(op.content.trim(), where);
          const text = clean.text;
          if (clean.note) lines.push(clean.note);
          lines.push(`replaced in ${op.target}: "${displayEntry(hit)}" -> "${text}"`);
          hit.text = text;
        }
      }

      // Forgotten at a person's request (erasure/tombstone-store.ts): neither a text nor its source's words come back.
      await refuseForgotten(tx, scope.workspaceId, [...work.values()].flat().flatMap((e) => (!e.removed && e.text && e.text !== e.original ? [e.text] : [])), prov.sourceMessageId, (m) => new MemoryError(m));

      const usage: ApplyOutcome["usage"] = [];
      for (const [target, w] of work) {
        const kept = w.filter((e) => !e.removed && !e.pending && e.held === undefined);
        // Facts are in every prompt, so they share the budget; lessons only count against their own cap.
        const live = kept.filter((e) => e.kind !== "lesson").map((e) => e.text);
        const lessons = kept.length - live.length;
        const used = usedChars(live);
        const limit = this.budgets[target];
        const before = () => listEntries(w.filter((e) => e.original !== null).map((e) => ({ id: e.id, kind: e.kind, text: e.original as string })));
        if (used > limit) {
          throw new MemoryError(
            `${target} memory would hold ${grouped(used)}/${grouped(limit)} chars, over its budget by ${grouped(used - limit)}. Nothing was saved. Consolidate first: merge related entries into one shorter entry (replace) and remove stale ones, then retry in one batch. Current ${target} entries:\n${before()}`,
          );
        }
        if (lessons > LESSON_LIMITS.perTarget) {
          throw new MemoryError(
            `${target} memory would hold ${lessons} lessons, over its cap of ${LESSON_LIMITS.perTarget}. Nothing was saved. Merge lessons on the same topic (replace) and remove outdated ones, then retry. Current ${target} entries:\n${before()}`,
          );
        }
        usage.push({ target, used, limit, count: live.length, lessons });
      }

      let changed = 0;
      const writes: ApplyOutcome["writes"] = [];
      for (const [target, w] of work) {
        for (const e of w) {
          if (e.id === null) {
            if (e.removed) continue;
            const pending = e.pending === true;
            const row = await tx.memoryEntry.create({
              data: {
                workspaceId: scope.workspaceId,
                scope: target,
                ownerId: target === "user" ? scope.personId : null,
                channelKey: target === "channel" ? scope.channelKey : null,
                text: e.text,
                // New text passed cleanForWrite (scanForWrite) just now; redaction only puts placeholders in.
                scannedWith: RULES_VERSION,
                kind: e.kind,
                status: e.held !== undefined ? "held" : pending ? "pending" : "active",
                replacesId: e.replacesId ?? null,
                proposedScope: e.held !== undefined ? target : e.proposed ? "team" : null,
                source: prov.source,
                createdById: prov.actorId,
                sourceMessageId: prov.sourceMessageId,
              },
            });
            const replaced = e.replacesId === undefined ? null : ([...work.values()].flat().find((x) => x.id === e.replacesId) ?? null);
            const action = e.action ?? "add";
            await writeRevision(
              tx,
              { workspaceId: scope.workspaceId, entityType: "memory", entityId: row.id, action: e.held !== undefined ? "hold" : replaced ? `propose_${action}` : "add", oldText: replaced?.original ?? null, newText: e.text || null },
              e.held !== undefined ? { ...prov, reason: `held by the safety screen: ${e.held}` } : prov,
            );
            if (e.held !== undefined) lines.push(heldLine(e.text, row.id, target, e.held));
            else if (e.proposed) lines.push(proposedLine(e.text, row.id, scope, replaced ? displayEntry(replaced) : null, pending));
            else if (pending) lines.push(pendingLine(e.text, row.id, replaced, review));
            writes.push({ id: row.id, action, target, kind: e.kind, text: e.text, pending, ...(e.proposed ? { proposed: true as const } : {}), ...(e.held !== undefined ? { held: true as const } : {}) });
            changed++;
          } else if (e.removed) {
            await tx.memoryEntry.update({ where: { id: e.id }, data: { status: "archived" } });
            await writeRevision(tx, { workspaceId: scope.workspaceId, entityType: "memory", entityId: e.id, action: "remove", oldText: e.original, newText: null }, prov);
            writes.push({ id: e.id, action: "remove", target, kind: e.kind, text: e.original ?? "", pending: false });
            changed++;
          } else if (e.text !== e.original) {
            // The entry keeps its id and starts a new interval; the text it had is kept, superseded (validity.ts).
            const at = prov.at ?? this.now();
            await keepReplaced(tx, read.get(e.id)!, at);
            // A dispute was about the text it had: the new text is checked afresh (learning/contradictions.ts).
            await tx.memoryEntry.update({ where: { id: e.id }, data: { text: e.text, scannedWith: RULES_VERSION, validFrom: at, conflictWithId: null } });
            await tx.memoryEntry.updateMany({ where: { workspaceId: scope.workspaceId, conflictWithId: e.id }, data: { conflictWithId: null } });
            await writeRevision(tx, { workspaceId: scope.workspaceId, entityType: "memory", entityId: e.id, action: "replace", oldText: e.original, newText: e.text }, prov);
            writes.push({ id: e.id, action: "replace", target, kind: e.kind, text: e.text, pending: false });
            changed++;
          }
        }
      }
      return { lines, usage, changed, writes };
    });
    this.changed(scope.workspaceId);
    const landed = outcome.writes.filter((w) => !w.pending && !w.held && w.action !== "remove").map((w) => w.id);
    if (landed.length) this.onLanded?.(scope.workspaceId, landed);
    return outcome;
  }
}
