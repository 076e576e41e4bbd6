/**
 * Lessons and team rules learned from corrections: their reads (listing, candidates, proposals)
 * and writes (learning, promotion, approval, archiving, confidence). Lessons are memory entries of kind
 * "lesson" (a person's own, or a channel's); a team rule is kind "rule" in team scope, shown in
 * every session's snapshot of the workspace.
 *
 * Invariants kept here:
 * - Every text written (rule and quote) passes the content scanner; a blocked one is not written.
 * - Nothing is deleted: a lesson promoted to a rule, or a rule replaced, is archived with a revision.
 * - A channel lesson stays keyed to its channel until promoted: no other channel's read matches it.
 * - Rules share the team's character budget with team facts (both are in every prompt).
 * - Lesson and rule writes happen behind the memory store: each write here drops its lesson cache.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Person } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { workspaceScope } from "../db/scopes.ts";
import type { PersonScope, Scope, WorkspaceScope } from "../ground/types.ts";
import { kindOf, LESSON_LIMITS, MemoryError, usedChars, type MemoryStore } from "../memory/store.ts";
import { RULES_VERSION, scanForWrite } from "../safety/scanner.ts";
import { parseCase } from "./lesson-case.ts";
import { supersede } from "../memory/supersede-store.ts";

export type { MemoryEntry, Person, Provenance };

/** The workspace of an entry this store read, as the scope reads in it take. */
export const scopeOfEntry = (entry: Pick<MemoryEntry, "workspaceId">): WorkspaceScope => workspaceScope({ id: entry.workspaceId });

/** Scans a text to be written; throws MemoryError when it is blocked, returns it with secrets redacted. */
export function cleaned(text: string): string {
  const verdict = scanForWrite(text);
  if (!verdict.ok) throw new MemoryError(verdict.message);
  return verdict.text;
}

export interface LessonInput {
  workspaceId: string;
  /** user: the person's own (a DM correction); channel: the channel's. */
  target: "user" | "channel";
  ownerId: string | null;
  channelKey: string | null;
  text: string;
  quote: string;
  origin: string;
  prov: Provenance;
  /** The safety screen held it (its reason): written "held", in no prompt until a teammate releases it. */
  held?: string;
}

export async function saveLesson(tx: Tx, input: LessonInput): Promise<MemoryEntry> {
  const text = cleaned(input.text);
  const quote = cleaned(input.quote);
  if (text.length > LESSON_LIMITS.chars) throw new MemoryError(`a lesson holds at most ${LESSON_LIMITS.chars} chars`);
  const where =
    input.target === "user"
      ? { workspaceId: input.workspaceId, scope: "user", ownerId: input.ownerId, status: "active", kind: "lesson" }
      : { workspaceId: input.workspaceId, scope: "channel", channelKey: input.channelKey, status: "active", kind: "lesson" };
  const count = await tx.memoryEntry.count({ where });
  if (count >= LESSON_LIMITS.perTarget) throw new MemoryError(`${input.target} memory holds ${count} lessons, its cap: consolidate lessons first`);
  const row = await tx.memoryEntry.create({
    data: {
      workspaceId: input.workspaceId,
      scope: input.target,
      ownerId: input.target === "user" ? input.ownerId : null,
      channelKey: input.target === "channel" ? input.channelKey : null,
      text,
      quote,
      origin: input.origin,
      kind: "lesson",
      status: input.held === undefined ? "active" : "held",
      ...(input.held === undefined ? {} : { proposedScope: input.target }),
      scannedWith: RULES_VERSION,
      source: input.prov.source,
      createdById: input.prov.actorId,
      sourceMessageId: input.prov.sourceMessageId,
    },
  });
  const held = input.held === undefined ? {} : { reason: `held by the safety screen: ${input.held}` };
  await writeRevision(tx, { workspaceId: input.workspaceId, entityType: "memory", entityId: row.id, action: input.held === undefined ? "add" : "hold", oldText: null, newText: text }, { ...input.prov, ...held });
  return row;
}

export interface RuleInput {
  workspaceId: string;
  /** The lessons it comes from (archived, each with a revision naming the rule). */
  from: readonly MemoryEntry[];
  text: string;
  quote: string | null;
  origin: string | null;
  /** The older team rule it replaces (archived). */
  replaces: MemoryEntry | null;
  /** A rule that replaces another without a person's approval waits as pending (its proposal asks for ✅). */
  pending: boolean;
  teamBudget: number;
  prov: Provenance;
}

/** Creates a team rule from lessons. Throws MemoryError when team memory has no room for it. */
export async function createRule(tx: Tx, input: RuleInput): Promise<MemoryEntry> {
  const text = cleaned(input.text);
  const team = await tx.memoryEntry.findMany({ where: { workspaceId: input.workspaceId, scope: "team", status: "active" } });
  const hot = team.filter((e) => kindOf(e) !== "lesson" && e.id !== input.replaces?.id);
  const used = usedChars([...hot.map((e) => e.text), text]);
  if (used > input.teamBudget) {
    throw new MemoryError(`team memory would hold ${used}/${input.teamBudget} chars with this rule; consolidate team memory first`);
  }
  const rule = await tx.memoryEntry.create({
    data: {
      workspaceId: input.workspaceId,
      scope: "team",
      text,
      quote: input.quote,
      origin: input.origin,
      kind: "rule",
      status: input.pending ? "pending" : "active",
      replacesId: input.replaces?.id ?? null,
      scannedWith: RULES_VERSION,
      source: input.prov.source,
      createdById: input.from[0]?.createdById ?? input.prov.actorId,
      sourceMessageId: input.from[0]?.sourceMessageId ?? input.prov.sourceMessageId,
    },
  });
  await writeRevision(tx, { workspaceId: input.workspaceId, entityType: "memory", entityId: rule.id, action: input.pending ? "propose" : "add", oldText: null, newText: text }, input.prov);
  if (!input.pending) await settleRule(tx, rule, input.from, input.replaces, input.prov);
  return rule;
}

/** A rule in force: its lessons and the rule it replaces are archived, each with a revision. */
async function settleRule(tx: Tx, rule: MemoryEntry, from: readonly MemoryEntry[], replaces: MemoryEntry | null, prov: Provenance): Promise<void> {
  for (const lesson of from) {
    const r = await tx.memoryEntry.updateMany({ where: { id: lesson.id, status: "active" }, data: { status: "archived" } });
    if (r.count) await writeRevision(tx, { workspaceId: rule.workspaceId, entityType: "memory", entityId: lesson.id, action: "promote", oldText: lesson.text, newText: null }, { ...prov, reason: `promoted to team rule ${rule.id}` });
  }
  // The rule it replaces stays readable, closed and superseded by the new one (memory/validity.ts).
  if (replaces) await supersede(tx, replaces, rule.id, prov.at ?? new Date(), { ...prov, reason: `replaced by team rule ${rule.id}` }, "replace");
}

/** A pending rule approved by a person: in force now, replacing the rule it contradicts. */
async function activateRule(tx: Tx, rule: MemoryEntry, from: readonly MemoryEntry[], prov: Provenance): Promise<boolean> {
  const r = await tx.memoryEntry.updateMany({ where: { id: rule.id, status: "pending" }, data: { status: "active" } });
  if (r.count !== 1) return false;
  await writeRevision(tx, { workspaceId: rule.workspaceId, entityType: "memory", entityId: rule.id, action: "approve", oldText: null, newText: rule.text }, prov);
  const replaces = rule.replacesId ? await tx.memoryEntry.findFirst({ where: { id: rule.replacesId, workspaceId: rule.workspaceId } }) : null;
  await settleRule(tx, rule, from, replaces, prov);
  return true;
}

/** Records one person's approval of a proposal; returns the distinct approvers so far. */
async function recordApproval(tx: Tx, entry: MemoryEntry, prov: Provenance): Promise<number> {
  const already = await tx.revision.findFirst({ where: { entityType: "memory", entityId: entry.id, action: "approval", actorId: prov.actorId } });
  if (!already) await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "approval", oldText: null, newText: null }, prov);
  const rows = await tx.revision.findMany({ where: { entityType: "memory", entityId: entry.id, action: "approval" }, select: { actorId: true } });
  return new Set(rows.map((r) => r.actorId)).size;
}

/** What one approval did: counted toward those needed, made the rule, or found the proposal settled. */
export type ApprovalOutcome = { kind: "counted"; approvals: number } | { kind: "approved"; rule: MemoryEntry } | { kind: "closed" };

/** What `/cairn lessons` shows a person in a place, newest first, with the people who taught them. */
export interface LessonListing {
  own: MemoryEntry[];
  channel: MemoryEntry[];
  rules: MemoryEntry[];
  authors: Map<string, Person>;
}

/** Praise raises a lesson's or rule's confidence up to this, never above: a praised lesson ranks at most half again as high. */
export const MAX_CONFIDENCE = 1.5;

const NEWEST_FIRST = [{ createdAt: "desc" as const }, { id: "desc" as const }];

export class LessonStore {
  constructor(
    private readonly db: Db,
    private readonly memory: MemoryStore,
  ) {}

  private changed(): void {
    this.memory.forgetCached();
  }

  async find(scope: WorkspaceScope, id: string): Promise<MemoryEntry | null> {
    return this.db.memoryEntry.findFirst({ where: { id, workspaceId: scope.workspaceId } });
  }

  /** The entry a post of cairn's proposed (a lesson as a team rule, or a rule waiting for ✅). */
  async proposedIn(scope: WorkspaceScope, postId: number): Promise<MemoryEntry | null> {
    return this.db.memoryEntry.findFirst({ where: { workspaceId: scope.workspaceId, proposalMessageId: postId } });
  }

  /** The person's own lessons, the channel's (none in a DM) and the team rules, in force or waiting. */
  async listing(scope: Scope): Promise<LessonListing> {
    const { workspaceId } = scope;
    const [own, channel, rules] = await Promise.all([
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "user", ownerId: scope.personId, kind: "lesson", status: "active" }, orderBy: NEWEST_FIRST }),
      scope.isDm ? [] : this.db.memoryEntry.findMany({ where: { workspaceId, scope: "channel", channelKey: scope.channelKey, kind: "lesson", status: "active" }, orderBy: NEWEST_FIRST }),
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "team", kind: "rule", status: { in: ["active", "pending"] } }, orderBy: NEWEST_FIRST }),
    ]);
    const authorIds = [...new Set([...own, ...channel, ...rules].flatMap((e) => (e.createdById ? [e.createdById] : [])))];
    const authors = new Map((await this.db.person.findMany({ where: { workspaceId, id: { in: authorIds } } })).map((p) => [p.id, p]));
    return { own, channel, rules, authors };
  }

  /**
   * Lessons and rules a new correction may repeat or contradict, unranked. A DM correction is
   * compared with the person's own lessons only: it is private, so it never joins anyone else's.
   */
  async candidates(person: PersonScope, dm: boolean): Promise<MemoryEntry[]> {
    const base = { workspaceId: person.workspaceId, status: "active" };
    return dm
      ? this.db.memoryEntry.findMany({ where: { ...base, scope: "user", ownerId: person.personId, kind: "lesson" } })
      : this.db.memoryEntry.findMany({ where: { ...base, OR: [{ scope: "channel", kind: "lesson" }, { scope: "team", kind: "rule" }] } });
  }

  /**
   * A received correction becomes a lesson, and the correction is marked learned, in one
   * transaction. Throws MemoryError when the lesson cannot be written; an Error when another run learned it.
   */
  async learn(correctionId: string, input: LessonInput): Promise<MemoryEntry> {
    const lesson = await this.db.$transaction(async (tx) => {
      const row = await saveLesson(tx, input);
      const done = await tx.correction.updateMany({ where: { id: correctionId, status: "received" }, data: { status: "learned", lessonId: row.id } });
      if (done.count !== 1) throw new Error("the correction was learned by another run");
      return row;
    });
    this.changed();
    // A lesson in force is checked against those near it, as a memory write is (learning/contradictions.ts).
    if (lesson.status === "active") this.memory.onLanded?.(lesson.workspaceId, [lesson.id]);
    return lesson;
  }

  /** A team rule from lessons (see createRule). Throws MemoryError when team memory has no room for it. */
  async promote(input: RuleInput): Promise<MemoryEntry> {
    const rule = await this.db.$transaction((tx) => createRule(tx, input));
    this.changed();
    return rule;
  }

  /** The post proposing the entry (✅ on it approves), and for a lesson the team rule it would replace. */
  async markProposed(entry: MemoryEntry, proposal: { postId: number; replacesId?: string | null }): Promise<void> {
    const replaces = proposal.replacesId === undefined ? {} : { replacesId: proposal.replacesId };
    await this.db.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId }, data: { proposalMessageId: proposal.postId, ...replaces } });
    this.changed();
  }

  /**
   * The lessons a turn was shown were used now (the curator archives unused ones). The lesson cache
   * is kept: only the curator reads lastUsedAt, from the database, and a turn must not empty the cache.
   */
  async markUsed(scope: WorkspaceScope, ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.memoryEntry.updateMany({ where: { id: { in: [...ids] }, workspaceId: scope.workspaceId }, data: { lastUsedAt: at } });
  }

  /** Confidence moves with evidence: a lesson or rule in a corrected turn loses some, in a praised one gains (0 to MAX_CONFIDENCE). */
  async adjustConfidence(scope: WorkspaceScope, ids: readonly string[], delta: number): Promise<void> {
    const { workspaceId } = scope;
    if (ids.length) {
      const rows = await this.db.memoryEntry.findMany({ where: { workspaceId, id: { in: [...ids] } }, select: { id: true, confidence: true } });
      for (const r of rows) {
        const next = Math.min(MAX_CONFIDENCE, Math.max(0, r.confidence + delta));
        if (next !== r.confidence) await this.db.memoryEntry.updateMany({ where: { id: r.id, workspaceId }, data: { confidence: next } });
      }
    }
    this.changed();
  }

  /**
   * One person's approval of an open proposal (see approvals.ts), in one transaction: counted, and
   * once enough (or an admin's) the rule is in force. Throws MemoryError when team memory has no room.
   */
  async approve(entry: MemoryEntry, by: Provenance, rules: { admin: boolean; needed: number; teamBudget: number }): Promise<ApprovalOutcome> {
    const outcome = await this.db.$transaction(async (tx): Promise<ApprovalOutcome> => {
      const approvals = await recordApproval(tx, entry, by);
      if (!rules.admin && approvals < rules.needed) return { kind: "counted", approvals };
      if (entry.kind === "rule") {
        const from = parseCase(entry.origin)?.fromLessons ?? [];
        const lessons = from.length ? await tx.memoryEntry.findMany({ where: { id: { in: from }, workspaceId: entry.workspaceId } }) : [];
        return (await activateRule(tx, entry, lessons, by)) ? { kind: "approved", rule: entry } : { kind: "closed" };
      }
      const replaces = entry.replacesId ? await tx.memoryEntry.findFirst({ where: { id: entry.replacesId, workspaceId: entry.workspaceId, status: "active", kind: "rule" } }) : null;
      const rule = await createRule(tx, { workspaceId: entry.workspaceId, from: [entry], text: entry.text, quote: entry.quote, origin: entry.origin, replaces, pending: false, teamBudget: rules.teamBudget, prov: by });
      return { kind: "approved", rule };
    });
    if (outcome.kind === "approved") this.changed();
    return outcome;
  }

  /** A rejection: a pending rule is archived; a channel lesson stays, no longer proposed. False when it was settled already. */
  async reject(entry: MemoryEntry, by: Provenance): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      const r =
        entry.kind === "rule"
          ? await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, status: "pending" }, data: { status: "archived" } })
          : await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, status: "active", proposalMessageId: { not: null } }, data: { proposalMessageId: null } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "reject", oldText: entry.text, newText: entry.kind === "rule" ? null : entry.text }, by);
      return true;
    });
    if (done) this.changed();
    return done;
  }

  /** A doubtful team rule kept as it is (`keep <id>`): its doubt counts only corrections after this. */
  async keep(entry: MemoryEntry, prov: Provenance): Promise<void> {
    await this.db.$transaction(async (tx) => {
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "keep", oldText: null, newText: null }, prov);
    });
    this.changed();
  }

  /** A team rule reworded (`reword <id> <text>`), with a revision rollback undoes; its doubt starts afresh. False: not in force. */
  async reword(entry: MemoryEntry, text: string, prov: Provenance): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      const r = await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, status: "active" }, data: { text } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "edit", oldText: entry.text, newText: text }, prov);
      return true;
    });
    this.changed();
    return done;
  }

  /** When each of these rules was last kept or reworded: corrections before then no longer count against it. */
  async doubtClearedAt(scope: WorkspaceScope, ids: readonly string[]): Promise<Map<string, Date>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.revision.findMany({ where: { workspaceId: scope.workspaceId, entityType: "memory", entityId: { in: [...ids] }, action: { in: ["keep", "edit"] } }, select: { entityId: true, createdAt: true } });
    const at = new Map<string, Date>();
    for (const r of rows) if (!at.has(r.entityId) || at.get(r.entityId)! < r.createdAt) at.set(r.entityId, r.createdAt);
    return at;
  }

  /** Archives a channel lesson or a team rule (`forget <id>`), with a revision; false when it was archived already. */
  async archive(entry: MemoryEntry, prov: Provenance): Promise<boolean> {
    const archived = await this.db.$transaction(async (tx) => {
      const r = await tx.memoryEntry.updateMany({ where: { id: entry.id, workspaceId: entry.workspaceId, status: { in: ["active", "pending"] } }, data: { status: "archived" } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "archive", oldText: entry.text, newText: null }, prov);
      return true;
    });
    this.changed();
    return archived;
  }
}
