/**
 * What the weekly report reads and writes: the workspaces it reports on (each returned with
 * its scope), the stored reports, and one workspace's counts for a week (replies, corrections,
 * who talked to cairn, failed replies, skills, reply traces, praised answers, the questions behind
 * corrected answers, the memory entries with their revisions, the people who taught them).
 * Every read of a workspace's rows takes its scope; the report's arithmetic stays with its services.
 */
import { z } from "zod";
import type { Db } from "../db/client.ts";
import type { Person, Report, Workspace } from "../db/generated/sqlite/client.ts";
import { isUniqueViolation } from "../db/errors.ts";
import { TOMBSTONE } from "../erasure/erasure-store.ts";
import { workspaceScope } from "../db/scopes.ts";
import type { WorkspaceScope } from "../ground/scope.ts";
import type { Platform } from "../ground/types.ts";
import type { EntryRow, RevisionRow } from "./lifetime.ts";

export type { Report, Workspace } from "../db/generated/sqlite/client.ts";

/** A workspace row with the scope its reads take. */
export interface ReportWorkspace {
  scope: WorkspaceScope;
  workspace: Workspace;
}

/** A memory entry's fields the report reads. */
export interface MemoryRow extends EntryRow {
  scope: string;
  kind: string;
  source: string;
  origin: string | null;
  createdById: string | null;
  confidence: number;
  flag: string | null;
  lastUsedAt: Date | null;
}

/** A week, [start, end). */
export interface Span {
  start: Date;
  end: Date;
}

/** What skills did in a week (metrics.ts counts it). */
export interface SkillActivity {
  /** The workspace's own skills created in the week (bundled ones have no workspace). */
  created: number;
  /** Skills whose content or files changed in the week: one id per revision. */
  patched: string[];
  /** The week's reply traces' skill reads, as stored (a JSON list of names each). */
  reads: string[];
  /** Active team skills of the workspace, older than the week, never read: names, oldest first. */
  neverUsed: string[];
}

/** An answer people praised: the question it answered (and when it was answered), the skills its turn read, its praise. */
export interface PraisedReply {
  question: string;
  at: Date;
  skills: string[];
  praise: number;
}

/** One of the curator's changes of the week, as the report lists it. */
export interface CuratorAction {
  revisionId: string;
  /** archive, merge, or create (a merged skill's umbrella). */
  action: string;
  entityId: string;
  /** skill, or the entry's kind (fact, lesson, rule). */
  kind: string;
  /** The skill's name, or the entry's text. */
  name: string;
  reason: string | null;
  at: Date;
  /** A channel's entry: its channel (the report names it rather than quoting it); null otherwise. */
  channelKey: string | null;
}

export interface SupersededRow {
  id: string;
  channelKey: string | null;
  kind: string;
  text: string;
  until: Date;
  byId: string | null;
  byText: string | null;
}

export interface DecidedConflict {
  revisionId: string;
  channelKey: string | null;
  action: string;
  entryId: string;
  text: string;
  at: Date;
}

export interface ConfirmableRow {
  id: string;
  scope: string;
  channelKey: string | null;
  kind: string;
  text: string;
  createdAt: Date;
  validFrom: Date | null;
  verifiedAt: Date | null;
}

/** What the team reads: a channel's or the workspace's (a person's own are never listed). */
const SHARED = ["team", "channel"];
const CURATOR_ACTIONS = ["archive", "merge", "create"];
export const KEEP_ACTIONS = ["keep_new", "keep_old", "keep_both"];

const withScope = (workspace: Workspace): ReportWorkspace => ({ scope: workspaceScope(workspace), workspace });
const inSpan = (p: Span) => ({ gte: p.start, lt: p.end });
const CONTENT_CHANGES = ["patch", "edit", "write_file", "remove_file"];

const Ids = z.array(z.string()).catch([]);

/** A trace's JSON list of ids (or skill names); none when it does not parse. */
function shownIds(json: string): string[] {
  try {
    return Ids.parse(JSON.parse(json));
  } catch {
    return [];
  }
}

export class ReportStore {
  constructor(private readonly db: Db) {}

  /** Workspaces cairn was used in before `end` (a conversation begun), oldest first: each gets a report. */
  async usedBefore(end: Date): Promise<ReportWorkspace[]> {
    const rows = await this.db.workspace.findMany({ where: { conversations: { some: { createdAt: { lt: end } } } }, orderBy: { createdAt: "asc" } });
    return rows.map(withScope);
  }

  /** The workspace whose stored conversation in this platform channel is the newest. */
  async ofChannel(platform: Platform, channelId: string): Promise<ReportWorkspace | null> {
    const seen = await this.db.conversation.findFirst({ where: { channelId, workspace: { platform } }, orderBy: { lastMessageAt: "desc" }, include: { workspace: true } });
    return seen ? withScope(seen.workspace) : null;
  }

  /** Every workspace of a platform. */
  async ofPlatform(platform: Platform): Promise<ReportWorkspace[]> {
    return (await this.db.workspace.findMany({ where: { platform } })).map(withScope);
  }

  /** Whether the workspace has its report for this slot. */
  async made(scope: WorkspaceScope, slot: string): Promise<boolean> {
    return (await this.db.report.findFirst({ where: { workspaceId: scope.workspaceId, slot }, select: { id: true } })) !== null;
  }

  /** Stores a report; null when another run stored the slot's first (that run posts it). */
  async save(scope: WorkspaceScope, slot: string, report: Span & { data: unknown; text: string }): Promise<{ id: string } | null> {
    try {
      return await this.db.report.create({
        data: { workspaceId: scope.workspaceId, slot, periodStart: report.start, periodEnd: report.end, data: JSON.stringify(report.data), text: report.text },
        select: { id: true },
      });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  /** Takes a stored report back (its post failed: the job's retry makes it again). */
  async remove(scope: WorkspaceScope, id: string): Promise<void> {
    await this.db.report.deleteMany({ where: { id, workspaceId: scope.workspaceId } });
  }

  /** The workspace's latest report (by the week it covers). */
  latest(scope: WorkspaceScope): Promise<Report | null> {
    return this.db.report.findFirst({ where: { workspaceId: scope.workspaceId }, orderBy: [{ periodEnd: "desc" }, { createdAt: "desc" }] });
  }

  /** Every memory entry of the workspace, and their revisions, oldest first. */
  async memory(scope: WorkspaceScope): Promise<{ entries: MemoryRow[]; revisions: RevisionRow[] }> {
    const { workspaceId } = scope;
    const [entries, revisions] = await Promise.all([
      this.db.memoryEntry.findMany({
        where: { workspaceId },
        select: { id: true, scope: true, kind: true, status: true, text: true, source: true, origin: true, createdById: true, confidence: true, flag: true, lastUsedAt: true, createdAt: true, updatedAt: true },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      }),
      this.db.revision.findMany({
        where: { workspaceId, entityType: "memory" },
        select: { entityId: true, action: true, actorId: true, createdAt: true },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      }),
    ]);
    return { entries, revisions };
  }

  /** Replies (cairn's answers to a person's message: assistant, sent, replyToId set) and corrections (one per answer asked about, any status). */
  async week(scope: WorkspaceScope, p: Span): Promise<{ replies: number; corrections: number }> {
    const { workspaceId } = scope;
    const [replies, corrections] = await Promise.all([
      this.db.message.count({ where: { workspaceId, role: "assistant", status: "sent", replyToId: { not: null }, createdAt: inSpan(p) } }),
      this.db.correction.count({ where: { workspaceId, createdAt: inSpan(p) } }),
    ]);
    return { replies, corrections };
  }

  /** Corrections of the week that became a lesson. */
  learnedCorrections(scope: WorkspaceScope, p: Span): Promise<number> {
    return this.db.correction.count({ where: { workspaceId: scope.workspaceId, createdAt: inSpan(p), status: "learned" } });
  }

  /**
   * Who talked to cairn in the week: distinct people (not bots) who wrote in a conversation with it,
   * and those conversations. DMs are counted (never quoted); a listened channel's own messages are not.
   */
  async activity(scope: WorkspaceScope, p: Span): Promise<{ people: number; conversations: number }> {
    const rows = await this.db.message.findMany({
      where: { workspaceId: scope.workspaceId, role: "user", authorId: { not: null }, createdAt: inSpan(p), conversation: { kind: "chat" }, author: { isBot: false } },
      select: { authorId: true, conversationId: true },
      distinct: ["authorId", "conversationId"],
    });
    return { people: new Set(rows.map((r) => r.authorId)).size, conversations: new Set(rows.map((r) => r.conversationId)).size };
  }

  /**
   * Replies of the week stored as failed (an apology, a rate limit's notice, an answer no platform
   * took), and of those, the ones whose text is one of `apologies` (the model could not be reached).
   */
  async unanswered(scope: WorkspaceScope, p: Span, apologies: readonly string[]): Promise<{ failed: number; apologised: number }> {
    const where = { workspaceId: scope.workspaceId, role: "assistant", status: "failed", replyToId: { not: null }, createdAt: inSpan(p) };
    const [failed, apologised] = await Promise.all([this.db.message.count({ where }), this.db.message.count({ where: { ...where, text: { in: [...apologies] } } })]);
    return { failed, apologised };
  }

  /**
   * The questions these replies answered, with when they were asked: only from channel
   * conversations (a DM's text never reaches the report) and never an erased message.
   */
  async questionsAnswered(scope: WorkspaceScope, replyIds: readonly number[]): Promise<{ replyId: number; text: string; at: Date }[]> {
    if (replyIds.length === 0) return [];
    const { workspaceId } = scope;
    const replies = await this.db.message.findMany({ where: { workspaceId, id: { in: [...replyIds] }, role: "assistant", conversation: { isDm: false, kind: "chat" } }, select: { id: true, replyToId: true } });
    const asked = replies.flatMap((r) => (r.replyToId === null ? [] : [r.replyToId]));
    if (asked.length === 0) return [];
    const questions = await this.db.message.findMany({ where: { workspaceId, id: { in: asked }, role: "user", conversation: { isDm: false }, NOT: { text: TOMBSTONE } }, select: { id: true, text: true, createdAt: true } });
    const byId = new Map(questions.map((q) => [q.id, q]));
    return replies.flatMap((r) => {
      const q = r.replyToId === null ? undefined : byId.get(r.replyToId);
      return q ? [{ replyId: r.id, text: q.text, at: q.createdAt }] : [];
    });
  }

  async skills(scope: WorkspaceScope, p: Span): Promise<SkillActivity> {
    const { workspaceId } = scope;
    const [created, patches, traces, unused] = await Promise.all([
      this.db.skill.count({ where: { workspaceId, createdAt: inSpan(p) } }),
      this.db.revision.findMany({ where: { workspaceId, entityType: "skill", action: { in: CONTENT_CHANGES }, createdAt: inSpan(p) }, select: { entityId: true } }),
      // Reads recorded in the week's reply traces (bundled skills included).
      this.db.replyTrace.findMany({ where: { workspaceId, createdAt: inSpan(p) }, select: { skills: true } }),
      this.db.skill.findMany({ where: { workspaceId, scope: "team", status: "active", useCount: 0, createdAt: { lt: p.start } }, select: { name: true }, orderBy: [{ createdAt: "asc" }, { name: "asc" }] }),
    ]);
    return { created, patched: patches.map((r) => r.entityId), reads: traces.map((t) => t.skills), neverUsed: unused.map((s) => s.name) };
  }

  /** The lessons shown with, and the team rules in the prompt of, each answer corrected in the week (ids, per answer). */
  async correctedShown(scope: WorkspaceScope, p: Span): Promise<string[][]> {
    const { workspaceId } = scope;
    const corrections = await this.db.correction.findMany({ where: { workspaceId, createdAt: inSpan(p) }, select: { replyMessageId: true } });
    if (corrections.length === 0) return [];
    const traces = await this.db.replyTrace.findMany({ where: { workspaceId, messageId: { in: corrections.map((c) => c.replyMessageId) } }, select: { lessons: true, rules: true } });
    return traces.map((t) => [...shownIds(t.lessons), ...shownIds(t.rules)]);
  }

  /**
   * The week's answers people praised (a positive reaction or feedback button still on them), in
   * conversations outside DMs. A trace is written with its reply or after it (by its first
   * reaction), never before, so the traces of the week's replies are among those since its start.
   */
  async praised(scope: WorkspaceScope, p: Span): Promise<PraisedReply[]> {
    const { workspaceId } = scope;
    const traces = await this.db.replyTrace.findMany({ where: { workspaceId, positive: { gt: 0 }, createdAt: { gte: p.start } }, select: { messageId: true, skills: true, positive: true } });
    if (traces.length === 0) return [];
    // Answers to a person, as the week's replies are counted.
    const replies = await this.db.message.findMany({
      where: { workspaceId, id: { in: traces.map((t) => t.messageId) }, role: "assistant", status: "sent", replyToId: { not: null }, createdAt: inSpan(p), conversation: { isDm: false } },
      select: { id: true, replyToId: true, createdAt: true },
    });
    const asked = replies.flatMap((r) => (r.replyToId === null ? [] : [r.replyToId]));
    const questions = new Map((await this.db.message.findMany({ where: { workspaceId, id: { in: asked }, NOT: { text: TOMBSTONE } }, select: { id: true, text: true } })).map((q) => [q.id, q.text]));
    const byReply = new Map(traces.map((t) => [t.messageId, t]));
    return replies.flatMap((r) => {
      const question = r.replyToId === null ? undefined : questions.get(r.replyToId);
      const trace = byReply.get(r.id);
      return question === undefined || !trace ? [] : [{ question, at: r.createdAt, skills: shownIds(trace.skills), praise: trace.positive }];
    });
  }

  /** Of these skill names, those everyone in the workspace sees: its team skills and bundled ones (a channel's or a person's never). */
  async teamSkills(scope: WorkspaceScope, names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.db.skill.findMany({ where: { name: { in: [...names] }, OR: [{ bundled: true }, { workspaceId: scope.workspaceId, scope: "team" }] }, select: { name: true } });
    return new Set(rows.map((r) => r.name));
  }

  /**
   * The curator's archives and merges of the week (its revisions), oldest first, with the item each
   * changed: only shared items (a person's own skill or profile entry is not the team's to read).
   */
  async curatorActions(scope: WorkspaceScope, p: Span): Promise<CuratorAction[]> {
    const { workspaceId } = scope;
    const revs = await this.db.revision.findMany({
      where: { workspaceId, source: "curator", action: { in: [...CURATOR_ACTIONS] }, entityType: { in: ["memory", "skill"] }, createdAt: inSpan(p) },
      select: { id: true, entityType: true, entityId: true, action: true, oldText: true, newText: true, reason: true, createdAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    if (revs.length === 0) return [];
    const ids = [...new Set(revs.map((r) => r.entityId))];
    const [skills, entries] = await Promise.all([
      this.db.skill.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true, name: true, scope: true } }),
      this.db.memoryEntry.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true, scope: true, kind: true, channelKey: true } }),
    ]);
    const skill = new Map(skills.map((s) => [s.id, s]));
    const entry = new Map(entries.map((e) => [e.id, e]));
    return revs.flatMap((r): CuratorAction[] => {
      const item = r.entityType === "skill" ? skill.get(r.entityId) : entry.get(r.entityId);
      if (!item || item.scope === "user") return [];
      const name = r.entityType === "skill" ? (skill.get(r.entityId)?.name ?? r.entityId) : (r.newText ?? r.oldText ?? "");
      const kind = r.entityType === "skill" ? "skill" : (entry.get(r.entityId)?.kind ?? "fact");
      const channelKey = r.entityType === "memory" && item.scope === "channel" ? (entry.get(r.entityId)?.channelKey ?? null) : null;
      return [{ revisionId: r.id, action: r.action, entityId: r.entityId, kind, name, reason: r.reason, at: r.createdAt, channelKey }];
    });
  }

  /** Shared entries whose text stopped holding in the week (status "superseded"), each with the entry in force now. */
  async superseded(scope: WorkspaceScope, p: Span): Promise<SupersededRow[]> {
    const { workspaceId } = scope;
    const rows = await this.db.memoryEntry.findMany({
      where: { workspaceId, status: "superseded", scope: { in: SHARED }, validUntil: inSpan(p) },
      select: { id: true, kind: true, text: true, channelKey: true, validUntil: true, supersededById: true },
      orderBy: [{ validUntil: "asc" }, { id: "asc" }],
    });
    const byIds = rows.flatMap((r) => (r.supersededById ? [r.supersededById] : []));
    const by = new Map(byIds.length ? (await this.db.memoryEntry.findMany({ where: { workspaceId, id: { in: byIds } }, select: { id: true, text: true } })).map((e) => [e.id, e.text]) : []);
    return rows.map((r) => ({ id: r.id, kind: r.kind, text: r.text, channelKey: r.channelKey, until: r.validUntil ?? p.end, byId: r.supersededById, byText: r.supersededById ? (by.get(r.supersededById) ?? null) : null }));
  }

  /** Conflicts people decided in the week (keep new, keep old, keep both), oldest first, with the entry's text. */
  async conflictsDecided(scope: WorkspaceScope, p: Span): Promise<DecidedConflict[]> {
    const { workspaceId } = scope;
    const revs = await this.db.revision.findMany({
      where: { workspaceId, entityType: "memory", action: { in: [...KEEP_ACTIONS] }, createdAt: inSpan(p) },
      select: { id: true, entityId: true, action: true, oldText: true, newText: true, createdAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const entries = new Map(
      revs.length ? (await this.db.memoryEntry.findMany({ where: { workspaceId, id: { in: revs.map((r) => r.entityId) } }, select: { id: true, scope: true, text: true, channelKey: true } })).map((e) => [e.id, e]) : [],
    );
    return revs.flatMap((r) => {
      const e = entries.get(r.entityId);
      return e && e.scope !== "user" ? [{ revisionId: r.id, action: r.action, entryId: r.entityId, text: r.newText ?? r.oldText ?? e.text, at: r.createdAt, channelKey: e.channelKey }] : [];
    });
  }

  /** Shared active entries with the dates that say when they were last confirmed (validity.ts `isDue` picks the due ones). */
  confirmable(scope: WorkspaceScope): Promise<ConfirmableRow[]> {
    return this.db.memoryEntry.findMany({
      where: { workspaceId: scope.workspaceId, status: "active", scope: { in: SHARED } },
      select: { id: true, scope: true, channelKey: true, kind: true, text: true, createdAt: true, validFrom: true, verifiedAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
  }

  /** People of the workspace, by id (who taught and approved what the report lists). */
  async people(scope: WorkspaceScope, ids: ReadonlySet<string>): Promise<Pick<Person, "id" | "displayName" | "externalId">[]> {
    if (ids.size === 0) return [];
    return this.db.person.findMany({ where: { workspaceId: scope.workspaceId, id: { in: [...ids] } }, select: { id: true, displayName: true, externalId: true } });
  }
}
