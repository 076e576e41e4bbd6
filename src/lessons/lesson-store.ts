/**
 * Writes of lessons and team rules learned from corrections. Lessons are memory entries of kind
 * "lesson" (a person's own, or a channel's); a team rule is kind "rule" in team scope, shown in
 * every session's snapshot of the workspace.
 *
 * Invariants kept here:
 * - Every text written (rule and quote) passes the content scanner; a blocked one is not written.
 * - Nothing is deleted: a lesson promoted to a rule, or a rule replaced, is archived with a revision.
 * - A channel lesson stays keyed to its channel until promoted: no other channel's read matches it.
 * - Rules share the team's character budget with team facts (both are in every prompt).
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { kindOf, LESSON_LIMITS, MemoryError, usedChars, type MemoryStore } from "../memory/store.ts";
import { RULES_VERSION, scanForWrite } from "../safety/scanner.ts";

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
      status: "active",
      scannedWith: RULES_VERSION,
      source: input.prov.source,
      createdById: input.prov.actorId,
      sourceMessageId: input.prov.sourceMessageId,
    },
  });
  await writeRevision(tx, { workspaceId: input.workspaceId, entityType: "memory", entityId: row.id, action: "add", oldText: null, newText: text }, input.prov);
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
  if (replaces) {
    const r = await tx.memoryEntry.updateMany({ where: { id: replaces.id, status: "active" }, data: { status: "archived" } });
    if (r.count) await writeRevision(tx, { workspaceId: rule.workspaceId, entityType: "memory", entityId: replaces.id, action: "replace", oldText: replaces.text, newText: null }, { ...prov, reason: `replaced by team rule ${rule.id}` });
  }
}

/** A pending rule approved by a person: in force now, replacing the rule it contradicts. */
export async function activateRule(tx: Tx, rule: MemoryEntry, from: readonly MemoryEntry[], prov: Provenance): Promise<boolean> {
  const r = await tx.memoryEntry.updateMany({ where: { id: rule.id, status: "pending" }, data: { status: "active" } });
  if (r.count !== 1) return false;
  await writeRevision(tx, { workspaceId: rule.workspaceId, entityType: "memory", entityId: rule.id, action: "approve", oldText: null, newText: rule.text }, prov);
  const replaces = rule.replacesId ? await tx.memoryEntry.findFirst({ where: { id: rule.replacesId, workspaceId: rule.workspaceId } }) : null;
  await settleRule(tx, rule, from, replaces, prov);
  return true;
}

/** Records one person's approval of a proposal; returns the distinct approvers so far. */
export async function recordApproval(tx: Tx, entry: MemoryEntry, prov: Provenance): Promise<number> {
  const already = await tx.revision.findFirst({ where: { entityType: "memory", entityId: entry.id, action: "approval", actorId: prov.actorId } });
  if (!already) await writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: "approval", oldText: null, newText: null }, prov);
  const rows = await tx.revision.findMany({ where: { entityType: "memory", entityId: entry.id, action: "approval" }, select: { actorId: true } });
  return new Set(rows.map((r) => r.actorId)).size;
}

/** Confidence moves with evidence: a lesson shown in a corrected turn loses some, in a praised one gains. */
export async function adjustConfidence(db: Db, workspaceId: string, ids: readonly string[], delta: number): Promise<void> {
  if (ids.length === 0) return;
  const rows = await db.memoryEntry.findMany({ where: { workspaceId, id: { in: [...ids] } }, select: { id: true, confidence: true } });
  for (const r of rows) {
    const next = Math.min(1.5, Math.max(0, r.confidence + delta));
    if (next !== r.confidence) await db.memoryEntry.updateMany({ where: { id: r.id, workspaceId }, data: { confidence: next } });
  }
}

/** Lesson and rule writes happen behind the memory store: its lesson cache must drop them. */
export function invalidate(memory: MemoryStore): void {
  memory.forgetCached();
}
