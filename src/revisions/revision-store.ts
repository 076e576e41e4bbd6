/**
 * Revisions read and undone: one revision by id, an item's history, a curator run's changes, the
 * persona's history, who made them, and a rollback applied with a revision of its own. Every read
 * is of one workspace.
 *
 * Writing a revision stays in src/db/revisions.ts (`writeRevision`): each store that changes a
 * skill, an entry or the persona calls it inside its own transaction, so a change and its record
 * commit together or not at all; a store here could not share those transactions.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Person, Revision, Skill } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { refuseForgotten } from "../db/tombstones.ts";
import type { WorkspaceScope } from "../ground/scope.ts";
import { checkedMark } from "../safety/scanner.ts";
import { parseSkillMd } from "../skills/skillmd.ts";
import { hashOf } from "../skills/store.ts";
import type { Undo } from "./undo.ts";

export type { Revision } from "../db/generated/sqlite/client.ts";
export type { Provenance } from "../db/revisions.ts";
export { ForgottenError } from "../db/tombstones.ts";

/** The skill or memory entry a history or rollback command is about. */
export type Item = { type: "skill"; row: Skill } | { type: "memory"; row: MemoryEntry };

/** Who made a revision, as the history names them. */
export type Actor = Pick<Person, "id" | "displayName" | "externalId">;

/** A cache over rows a rollback changes (the skills index, memory blocks): dropped after each one. */
export interface Cached {
  forgetCached(): void;
}

type Ok = Extract<Undo, { ok: true }>;
type SkillRow = Extract<Item, { type: "skill" }>["row"];
type EntryRow = Extract<Item, { type: "memory" }>["row"];

const NEWEST = [{ createdAt: "desc" as const }, { id: "desc" as const }];

export class RevisionStore {
  constructor(
    private readonly db: Db,
    private readonly caches: readonly Cached[] = [],
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A revision of this workspace (a bundled skill's revisions belong to none). */
  find(scope: WorkspaceScope, id: string): Promise<Revision | null> {
    return this.db.revision.findFirst({ where: { id, workspaceId: scope.workspaceId } });
  }

  /** An item's revisions, newest first: the workspace's, and a bundled skill's own (no workspace). */
  ofItem(scope: WorkspaceScope, item: Item, take: number): Promise<Revision[]> {
    return this.db.revision.findMany({
      where: { entityType: item.type, entityId: item.row.id, OR: [{ workspaceId: scope.workspaceId }, { workspaceId: null }] },
      orderBy: NEWEST,
      take,
    });
  }

  /** What one run (a curator run) changed, oldest first. */
  ofRun(scope: WorkspaceScope, runId: string, take: number): Promise<Revision[]> {
    return this.db.revision.findMany({ where: { workspaceId: scope.workspaceId, runId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take });
  }

  /** The team persona's revisions, newest first. */
  ofPersona(scope: WorkspaceScope, take: number): Promise<Revision[]> {
    return this.db.revision.findMany({ where: { workspaceId: scope.workspaceId, entityType: "persona", entityId: scope.workspaceId }, orderBy: NEWEST, take });
  }

  /** The people of this workspace who made these revisions, by id. */
  async actors(scope: WorkspaceScope, revisions: readonly Pick<Revision, "actorId">[]): Promise<Map<string, Actor>> {
    const ids = [...new Set(revisions.flatMap((r) => (r.actorId ? [r.actorId] : [])))];
    if (ids.length === 0) return new Map();
    const people = await this.db.person.findMany({ where: { workspaceId: scope.workspaceId, id: { in: ids } }, select: { id: true, displayName: true, externalId: true } });
    return new Map(people.map((p) => [p.id, p]));
  }

  /** A skill by name (a workspace skill shadows a bundled one) or an entry by id; any status. */
  async findItem(scope: WorkspaceScope, ref: string): Promise<Item | null> {
    const { workspaceId } = scope;
    const entry = await this.db.memoryEntry.findFirst({ where: { id: ref, workspaceId } });
    if (entry) return { type: "memory", row: entry };
    const skills = await this.db.skill.findMany({ where: { OR: [{ name: ref }, { id: ref }], AND: [{ OR: [{ workspaceId }, { bundled: true }] }] } });
    const skill = skills.find((s) => !s.bundled) ?? skills[0];
    return skill ? { type: "skill", row: skill } : null;
  }

  /** The item a revision is about, in this workspace. */
  async itemOf(scope: WorkspaceScope, rev: Pick<Revision, "entityType" | "entityId">): Promise<Item | null> {
    const { workspaceId } = scope;
    if (rev.entityType === "memory") {
      const row = await this.db.memoryEntry.findFirst({ where: { id: rev.entityId, workspaceId } });
      return row ? { type: "memory", row } : null;
    }
    const row = await this.db.skill.findFirst({ where: { id: rev.entityId, workspaceId } });
    return row ? { type: "skill", row } : null;
  }

  /**
   * Applies an undo (undo.ts) to the item; the new revision's id, or null when there was nothing to
   * change. The revision is dated by this store's clock unless the provenance says when. Throws
   * ForgottenError (db/tombstones.ts) rather than bring back a forgotten entry's text.
   */
  undo(item: Item, undo: Ok, provenance: Provenance): Promise<string | null> {
    const prov = { ...provenance, at: provenance.at ?? this.now() };
    return this.db
      .$transaction((tx) => (item.type === "skill" ? undoSkill(tx, item.row, undo, prov) : undoEntry(tx, item.row, undo, prov)))
      .finally(() => this.caches.forEach((c) => c.forgetCached()));
  }
}

async function undoSkill(tx: Tx, skill: SkillRow, undo: Ok, prov: Provenance): Promise<string | null> {
  const rev = (oldText: string | null, newText: string | null, path: string | null = null) =>
    writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: undo.action, path, oldText, newText }, prov);
  const files = await tx.skillFile.findMany({ where: { skillId: skill.id } });
  if (undo.status) {
    if (skill.status === undo.status) return null;
    await tx.skill.update({ where: { id: skill.id }, data: { status: undo.status } });
    return rev(null, null);
  }
  if (undo.pinned !== undefined) {
    if (skill.pinned === undo.pinned) return null;
    await tx.skill.update({ where: { id: skill.id }, data: { pinned: undo.pinned } });
    return rev(null, null);
  }
  if (undo.file) {
    const { path, content } = undo.file;
    const cur = files.find((f) => f.path === path) ?? null;
    if ((cur?.content ?? null) === content) return null;
    if (content === null) await tx.skillFile.delete({ where: { id: cur!.id } });
    else if (cur) await tx.skillFile.update({ where: { id: cur.id }, data: { content } });
    else await tx.skillFile.create({ data: { skillId: skill.id, path, content } });
    const after = [...files.filter((f) => f.path !== path), ...(content === null ? [] : [{ path, content }])];
    await tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, after) } });
    return rev(cur?.content ?? null, content, path);
  }
  if (undo.text === undefined || undo.text === skill.content) return null;
  const parsed = parseSkillMd(undo.text);
  await tx.skill.update({
    where: { id: skill.id },
    data: { content: undo.text, contentHash: hashOf(undo.text, files), ...(parsed.ok ? { description: parsed.skill.description, descriptionChecked: checkedMark(parsed.skill.description) } : {}) },
  });
  return rev(skill.content, undo.text);
}

async function undoEntry(tx: Tx, entry: EntryRow, undo: Ok, prov: Provenance): Promise<string | null> {
  const rev = (oldText: string | null, newText: string | null, reason = prov.reason) =>
    writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: undo.action, oldText, newText }, { ...prov, reason });
  // What a person had forgotten is not brought back, by a restore or an earlier text: ForgottenError.
  const back = undo.status === "active" ? entry.text : undo.text;
  if (back) await refuseForgotten(tx, entry.workspaceId, [back]);
  if (undo.status) {
    if (entry.status === undo.status || undo.status === "stale") return null;
    // Back in force: a superseded or closed entry's interval is open again (memory/validity.ts).
    const reopen = undo.status === "active" ? { validUntil: null, supersededById: null } : {};
    await tx.memoryEntry.update({ where: { id: entry.id }, data: { status: undo.status, ...reopen } });
    return rev(null, null);
  }
  if (undo.clearFlag) {
    if (entry.flag === null) return null;
    await tx.memoryEntry.update({ where: { id: entry.id }, data: { flag: null } });
    return rev(null, null, `${prov.reason}; the flag was: ${entry.flag}`);
  }
  if (undo.text === undefined || undo.text === entry.text) return null;
  // Re-checked against the current injection rules when next shown (displayEntry), as any older entry.
  await tx.memoryEntry.update({ where: { id: entry.id }, data: { text: undo.text, scannedWith: null } });
  return rev(entry.text, undo.text);
}
