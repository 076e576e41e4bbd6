/**
 * Memory that stays true (issue 27): when a person last confirmed that a shared item still holds.
 * Shared items are the active team and channel entries (facts, rules, lessons) and the workspace's
 * live team skills; a person's own profile is theirs to keep and is never listed here.
 *
 * Invariants kept here:
 * - A confirmation (`/cairn verify`, "Still true", ✅ on an answer that drew on the item) reaches
 *   only items the confirming scope may see: the team's, and this channel's (none from a DM). Each
 *   one sets `verifiedAt`/`verifiedById` and writes a "verify" revision, in one transaction.
 * - Nothing here archives: items due and items whose confidence decayed are listed for people to
 *   confirm or archive (`forget <id>`), never changed silently.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Skill } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance } from "../db/revisions.ts";
import type { Scope, WorkspaceScope } from "../ground/scope.ts";
import { dayOf, lastConfirmed, type Dated } from "./validity.ts";

/** A shared item as freshness reads it: an entry, or a team skill. */
export interface FreshItem extends Dated {
  type: "memory" | "skill";
  id: string;
  /** fact | rule | lesson for an entry; "skill". */
  kind: string;
  /** team | channel */
  scope: string;
  channelKey: string | null;
  /** An entry's text; a skill's `name: description`. */
  text: string;
  /** A skill's name (what `verify` may be given instead of its id); null for an entry. */
  name: string | null;
  createdById: string | null;
  lastUsedAt: Date | null;
  confidence: number;
  /** Answers that drew on it lately (replies' traces); for a skill, its reads. */
  uses: number;
}

/** Options of the lists: the clock, the window in days, and (views) the channels the viewer reads; absent: every channel. */
export interface FreshQuery {
  now: Date;
  days: number;
  limit?: number;
  channels?: ReadonlySet<string>;
  /** `due` only: leave out what `decaying` lists with this window (it is proposed for archiving instead). */
  decayDays?: number;
}

/** Below this, a lesson's or rule's decayed confidence makes it a candidate for archiving. */
export const DECAY_THRESHOLD = 0.5;
/** Replies' traces read to count uses: the newest this many of the window. */
const TRACES_READ = 2_000;
const LIVE_SKILL = ["active", "stale"];
const DAY_MS = 86_400_000;

/**
 * Confidence halves every `days` without use or confirmation: an item at the default confidence (1)
 * left alone for `days` reaches DECAY_THRESHOLD; a corrected one sooner, a praised one later.
 */
export function decayedConfidence(e: Dated & { confidence: number; lastUsedAt: Date | null }, now: Date, days: number): number {
  const rested = Math.max(lastConfirmed(e).getTime(), e.lastUsedAt?.getTime() ?? 0);
  return e.confidence * 0.5 ** (Math.max(0, now.getTime() - rested) / (days * DAY_MS));
}

/** A lesson or rule unused and unconfirmed for `days` whose decayed confidence fell below DECAY_THRESHOLD. */
export function isDecayed(e: Dated & { kind: string; confidence: number; lastUsedAt: Date | null }, now: Date, days: number): boolean {
  if (e.kind !== "lesson" && e.kind !== "rule") return false;
  const rested = Math.max(lastConfirmed(e).getTime(), e.lastUsedAt?.getTime() ?? 0);
  return now.getTime() - rested >= days * DAY_MS && decayedConfidence(e, now, days) < DECAY_THRESHOLD;
}

/** Oldest confirmation first (by day: the date people read); on one day, the most used first. */
export function dueOrder(a: FreshItem, b: FreshItem): number {
  const day = dayOf(lastConfirmed(a)).localeCompare(dayOf(lastConfirmed(b)));
  return day || b.uses - a.uses || a.id.localeCompare(b.id);
}

export class VerifyStore {
  constructor(
    private readonly db: Db,
    /** The stores whose cached reads hold these rows (skills' index, lessons): told after a confirmation, so prompts show no date. */
    private readonly caches: readonly { forgetCached(): void }[] = [],
  ) {}

  /**
   * Confirms the items `ids` names (entry ids; skill ids or names) that `scope` may see; the ones
   * confirmed back. An id the scope cannot see is left out, exactly as one that does not exist.
   */
  async verify(scope: Scope, ids: readonly string[], prov: Provenance): Promise<FreshItem[]> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return [];
    const at = prov.at ?? new Date();
    const by = prov.actorId;
    const done = await this.db.$transaction(async (tx) => {
      const entries = await tx.memoryEntry.findMany({ where: { id: { in: wanted }, ...sharedEntries(scope) } });
      const skills = await tx.skill.findMany({ where: { OR: [{ id: { in: wanted } }, { name: { in: wanted } }], ...sharedSkills(scope) } });
      for (const e of entries) {
        await tx.memoryEntry.updateMany({ where: { id: e.id, workspaceId: scope.workspaceId }, data: { verifiedAt: at, verifiedById: by } });
        await writeRevision(tx, { workspaceId: scope.workspaceId, entityType: "memory", entityId: e.id, action: "verify", oldText: null, newText: null }, { ...prov, at });
      }
      for (const s of skills) {
        await tx.skill.updateMany({ where: { id: s.id, workspaceId: scope.workspaceId }, data: { verifiedAt: at, verifiedById: by } });
        await writeRevision(tx, { workspaceId: scope.workspaceId, entityType: "skill", entityId: s.id, action: "verify", oldText: null, newText: null }, { ...prov, at });
      }
      return [...entries.map((e) => entryItem({ ...e, verifiedAt: at, verifiedById: by }, 0)), ...skills.map((s) => skillItem({ ...s, verifiedAt: at, verifiedById: by }))];
    });
    if (done.length) this.caches.forEach((c) => c.forgetCached());
    return done;
  }

  /**
   * Shared items nobody confirmed for `days` (as of `now`): oldest and most used first (dueOrder),
   * `limit` of them, and how many there are in all.
   */
  async due(scope: WorkspaceScope, q: FreshQuery): Promise<{ items: FreshItem[]; total: number }> {
    const cutoff = new Date(q.now.getTime() - q.days * DAY_MS);
    const unconfirmed = { OR: [{ verifiedAt: null }, { verifiedAt: { lt: cutoff } }] };
    const [entries, skills] = await Promise.all([
      this.db.memoryEntry.findMany({
        where: { ...inWorkspace(scope, q.channels), AND: [unconfirmed, { OR: [{ validFrom: null, createdAt: { lt: cutoff } }, { validFrom: { lt: cutoff } }] }] },
      }),
      this.db.skill.findMany({ where: { ...teamSkills(scope), createdAt: { lt: cutoff }, ...unconfirmed } }),
    ]);
    const listed = q.decayDays ? entries.filter((e) => !isDecayed(e, q.now, q.decayDays!)) : entries;
    const uses = await this.uses(scope, listed.map((e) => e.id), cutoff);
    const all = [...listed.map((e) => entryItem(e, uses.get(e.id) ?? 0)), ...skills.map(skillItem)].sort(dueOrder);
    return { items: all.slice(0, q.limit ?? all.length), total: all.length };
  }

  /**
   * Lessons and team rules unused and unconfirmed for `days` whose decayed confidence fell below
   * DECAY_THRESHOLD: proposed for archiving, least confident first.
   */
  async decaying(scope: WorkspaceScope, q: FreshQuery): Promise<{ items: FreshItem[]; total: number }> {
    const cutoff = new Date(q.now.getTime() - q.days * DAY_MS);
    const rows = await this.db.memoryEntry.findMany({
      where: {
        ...inWorkspace(scope, q.channels),
        kind: { in: ["lesson", "rule"] },
        AND: [
          { OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: cutoff } }] },
          { OR: [{ verifiedAt: null }, { verifiedAt: { lt: cutoff } }] },
          { OR: [{ validFrom: null, createdAt: { lt: cutoff } }, { validFrom: { lt: cutoff } }] },
        ],
      },
    });
    const decayed = rows
      .filter((e) => isDecayed(e, q.now, q.days))
      .map((e) => ({ e, c: decayedConfidence(e, q.now, q.days) }))
      .sort((a, b) => a.c - b.c || a.e.id.localeCompare(b.e.id))
      .map(({ e }) => entryItem(e, 0));
    return { items: decayed.slice(0, q.limit ?? decayed.length), total: decayed.length };
  }

  /** How many replies since `since` drew on each entry (their traces' rules, facts and lessons). */
  private async uses(scope: WorkspaceScope, ids: readonly string[], since: Date): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (ids.length === 0) return counts;
    const wanted = new Set(ids);
    const traces = await this.db.replyTrace.findMany({
      where: { workspaceId: scope.workspaceId, createdAt: { gte: since } },
      select: { rules: true, facts: true, lessons: true },
      orderBy: { createdAt: "desc" },
      take: TRACES_READ,
    });
    for (const t of traces) {
      for (const id of new Set([t.rules, t.facts, t.lessons].flatMap(idsOf))) if (wanted.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }
}

/** The shared entries a scope may confirm: the team's, and this channel's (none from a DM). */
function sharedEntries(scope: Scope) {
  const channel = scope.isDm ? [] : [{ scope: "channel", channelKey: scope.channelKey }];
  return { workspaceId: scope.workspaceId, status: "active", OR: [{ scope: "team" }, ...channel] };
}

/** The skills a scope may confirm: the workspace's team skills, and this channel's. */
function sharedSkills(scope: Scope) {
  const channel = scope.isDm ? [] : [{ scope: "channel", channelKey: scope.channelKey }];
  return { workspaceId: scope.workspaceId, bundled: false, status: { in: LIVE_SKILL }, AND: [{ OR: [{ scope: "team" }, ...channel] }] };
}

/** A workspace's shared entries, its channels' limited to `channels` when given. */
function inWorkspace(scope: WorkspaceScope, channels?: ReadonlySet<string>) {
  const channel = channels ? { scope: "channel", channelKey: { in: [...channels] } } : { scope: "channel" };
  return { workspaceId: scope.workspaceId, status: "active", OR: [{ scope: "team" }, channel] };
}

function teamSkills(scope: WorkspaceScope) {
  return { workspaceId: scope.workspaceId, bundled: false, scope: "team", status: { in: LIVE_SKILL } };
}

function entryItem(e: MemoryEntry, uses: number): FreshItem {
  const { id, kind, scope, channelKey, text, createdById, createdAt, validFrom, verifiedAt, lastUsedAt, confidence } = e;
  return { type: "memory", id, kind, scope, channelKey, text, name: null, createdById, createdAt, validFrom, verifiedAt, lastUsedAt, confidence, uses };
}

function skillItem(s: Skill): FreshItem {
  const { id, scope, channelKey, createdById, createdAt, verifiedAt, lastUsedAt, confidence, useCount } = s;
  return { type: "skill", id, kind: "skill", scope, channelKey, text: `${s.name}: ${s.description}`, name: s.name, createdById, createdAt, validFrom: null, verifiedAt, lastUsedAt, confidence, uses: useCount };
}

function idsOf(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}
