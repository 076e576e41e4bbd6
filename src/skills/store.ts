/**
 * The skill library: SKILL.md procedures with support files, per workspace, plus the bundled ones
 * every workspace sees.
 *
 * Invariants kept here:
 * - Reads take a Scope; visibility (bundled, team, this channel, this person) is in the WHERE clause.
 * - Nothing is hard-deleted: archive is the strongest action.
 * - Bundled skills are read-only to the agent; they change only through `importBundled`.
 * - Every change writes a revision (old text, new text, who, why, from which message).
 * - A text is checked before it is written by change.ts (scanned, parsed, within its size), the
 *   checks a review's proposed change to a team skill passes too (proposal-store.ts).
 * - A stale skill (the curator's mark for one unused lately, src/curator) is still a live skill:
 *   listed, indexed (marked), readable and changeable; using it makes it active again at once.
 */
import type { Database, Db } from "../db/client.ts";
import type { Skill, SkillFile, SkillProposal } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import type { MemoryTarget, Scope, WorkspaceScope } from "../ground/types.ts";
import { contentHash, validateSkillName } from "./skillmd.ts";
import type { BundledSkill } from "./bundled.ts";
import { checkedFile, checkedSkillMd, checkPath, cleanOrThrow, parseOrThrow, patchedText, SkillError, SKILL_MD_MAX_CHARS, SUPPORT_FILE_MAX_CHARS, type PatchInput } from "./change.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import { checkedMark, markHolds } from "../safety/scanner.ts";
import { isVisible, LIVE_STATUSES, visibleWhere, type SkillIndexEntry } from "./visibility.ts";
import { SkillIndexStore } from "./index-store.ts";

export type { Skill, SkillFile };

export type SkillWithFiles = Skill & { files: SkillFile[] };

export { SkillError, SKILL_MD_MAX_CHARS, SUPPORT_FILE_MAX_CHARS, type PatchInput };

const live = { in: LIVE_STATUSES };

/**
 * Every new session's prompt lists the skills its place may see; a burst of new conversations in a
 * workspace would read the same rows once each. The workspace's index is read once and reused for
 * this long: writes through this store drop it at once, another replica's show within the TTL
 * (a running session's snapshot is frozen anyway).
 */
const INDEX_TTL_MS = 60_000;

export function hashOf(content: string, files: readonly { path: string; content: string }[]): string {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return contentHash([content, ...sorted.flatMap((f) => [f.path, f.content])]);
}

export class SkillStore {
  private readonly indexes = new TtlCache<string, SkillIndexEntry[]>({ ttlMs: INDEX_TTL_MS, max: 1_000 });
  /** Bumped by every write, so an index read that raced one is not kept. */
  private writes = 0;

  private readonly direct: SkillIndexStore | undefined;

  /** `direct`: the index read below Prisma (index-store.ts); without it, through Prisma. */
  constructor(
    private readonly db: Db,
    direct?: Pick<Database, "direct" | "provider">,
  ) {
    this.direct = direct && new SkillIndexStore(direct);
  }

  /**
   * A transaction that changes skills; the cached indexes go with it once it ends. An index read
   * while it ran is either dropped here or, finishing later, not kept (`writes` moved).
   */
  private write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.$transaction(fn).finally(() => this.forgetCached());
  }

  /** After skills were changed behind this store (an erasure). */
  forgetCached(): void {
    this.writes++;
    this.indexes.clear();
  }

  /** The live (active or stale) skills this scope may see, by name: what a prompt's skills index lists. */
  async index(scope: Scope): Promise<SkillIndexEntry[]> {
    const all = await this.indexes.load(
      scope.workspaceId,
      () =>
        this.direct?.read(scope.workspaceId) ??
        this.db.skill.findMany({
          where: { status: live, OR: [{ bundled: true }, { workspaceId: scope.workspaceId }] },
          select: { name: true, description: true, status: true, bundled: true, workspaceId: true, scope: true, ownerId: true, channelKey: true, createdById: true, createdAt: true, source: true, verifiedAt: true, descriptionChecked: true },
          orderBy: [{ name: "asc" }],
        }),
      () => this.writes,
    );
    return all.filter((s) => isVisible(scope, s));
  }

  async list(scope: Scope): Promise<Skill[]> {
    return this.db.skill.findMany({
      where: { status: live, ...visibleWhere(scope) },
      orderBy: [{ name: "asc" }],
    });
  }

  async find(scope: Scope, name: string, tx: Tx = this.db): Promise<SkillWithFiles | null> {
    const rows = await tx.skill.findMany({
      where: { name, status: live, ...visibleWhere(scope) },
      include: { files: { orderBy: { path: "asc" } } },
    });
    // A workspace skill shadows a bundled one of the same name (possible only if bundled later).
    return rows.find((r) => !r.bundled) ?? rows[0] ?? null;
  }

  /** A use of the skill (read to follow it): counted, and a stale skill is active again at once. */
  async markUsed(id: string, at = new Date()): Promise<void> {
    const skill = await this.db.skill.update({ where: { id }, data: { lastUsedAt: at, useCount: { increment: 1 } } });
    if (skill.status !== "stale") return;
    await this.write(async (tx) => {
      const flipped = await tx.skill.updateMany({ where: { id, status: "stale" }, data: { status: "active" } });
      if (flipped.count === 1) {
        await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: id, action: "reactivate", oldText: null, newText: null }, { source: "tool", actorId: null, sourceMessageId: null, reason: "used again", at });
      }
    });
  }

  private async notFound(scope: Scope, name: string): Promise<SkillError> {
    const names = (await this.list(scope)).map((s) => s.name);
    return new SkillError(
      `No active skill named '${name}'. Available: ${names.length ? names.join(", ") : "(none)"}. Check the name with skills_list, or create it with action 'create'.`,
    );
  }

  /** The skill this scope may change: visible, active, and not bundled. */
  private async mutable(scope: Scope, name: string, tx: Tx): Promise<SkillWithFiles> {
    const skill = await this.find(scope, name, tx);
    if (!skill) throw await this.notFound(scope, name);
    if (skill.bundled) {
      throw new SkillError(
        `'${name}' is a bundled skill that ships with cairn and is read-only. To adapt it, create a new skill with another name (for example '${name}-team') and copy what you need.`,
      );
    }
    return skill;
  }

  async create(scope: Scope, raw: string, target: MemoryTarget, prov: Provenance): Promise<Skill> {
    return (await this.insert(scope, raw, target, prov, null)).skill;
  }

  /**
   * A new skill kept at `target` and proposed for `proposal.toScope` in the same transaction
   * (tools/skill-reach.ts decides when): a team skill of someone not trusted to share alone, kept
   * where it was said; or, `held`, one the safety screen held, in no index until approved.
   */
  async createProposed(scope: Scope, raw: string, target: MemoryTarget, proposal: { toScope: MemoryTarget; held: boolean; reason: string }, prov: Provenance): Promise<{ skill: Skill; proposal: SkillProposal }> {
    const made = await this.insert(scope, raw, target, prov, proposal);
    return { skill: made.skill, proposal: made.proposal! };
  }

  private async insert(scope: Scope, raw: string, target: MemoryTarget, prov: Provenance, proposal: { toScope: MemoryTarget; held: boolean; reason: string } | null): Promise<{ skill: Skill; proposal: SkillProposal | null }> {
    const content = cleanOrThrow(raw, "SKILL.md");
    const parsed = parseOrThrow(content);
    const nameProblem = validateSkillName(parsed.name);
    if (nameProblem) throw new SkillError(`${nameProblem}\nNothing was saved.`);
    if (target === "channel" && scope.isDm) {
      throw new SkillError("This is a direct message, which has no channel: use scope 'team' or 'user'. Nothing was saved.");
    }
    return this.write(async (tx) => {
      const clash = await tx.skill.findFirst({
        where: { name: parsed.name, OR: [{ bundled: true }, { workspaceId: scope.workspaceId }] },
      });
      if (clash) {
        const why = clash.bundled
          ? "a bundled skill has that name"
          : clash.status === "archived"
            ? "an archived skill has that name (archived skills keep their names and history)"
            : clash.status === "held"
              ? "a skill with that name is held for a teammate's approval"
              : "a skill with that name exists; change it with 'patch' or 'edit' instead";
        throw new SkillError(`Cannot create '${parsed.name}': ${why}. Nothing was saved.`);
      }
      const skill = await tx.skill.create({
        data: {
          workspaceId: scope.workspaceId,
          scope: target,
          ownerId: target === "user" ? scope.personId : null,
          channelKey: target === "channel" ? scope.channelKey : null,
          name: parsed.name,
          description: parsed.description,
          descriptionChecked: checkedMark(parsed.description),
          content,
          contentHash: hashOf(content, []),
          source: prov.source,
          createdById: prov.actorId,
          sourceMessageId: prov.sourceMessageId,
          ...(proposal?.held ? { status: "held" } : {}),
        },
      });
      await writeRevision(tx, { workspaceId: scope.workspaceId, entityType: "skill", entityId: skill.id, action: "create", oldText: null, newText: content }, prov);
      if (!proposal) return { skill, proposal: null };
      const row = await tx.skillProposal.create({
        data: {
          workspaceId: scope.workspaceId,
          skillId: skill.id,
          name: skill.name,
          path: null,
          oldText: null,
          newText: content,
          reason: proposal.reason,
          proposedById: scope.personId,
          conversationId: scope.conversationId,
          sourceMessageId: prov.sourceMessageId,
          toScope: proposal.toScope,
        },
      });
      return { skill, proposal: row };
    });
  }

  async edit(scope: Scope, name: string, content: string, prov: Provenance): Promise<Skill> {
    return this.write(async (tx) => {
      const skill = await this.mutable(scope, name, tx);
      return this.saveContent(tx, skill, content, "edit", prov);
    });
  }

  async patch(scope: Scope, name: string, input: PatchInput, prov: Provenance): Promise<Skill> {
    if (input.old_string === "") throw new SkillError("old_string is empty: give the exact text to replace. Nothing was saved.");
    return this.write(async (tx) => {
      const skill = await this.mutable(scope, name, tx);
      const path = input.file_path ? checkPath(input.file_path) : null;
      const file = path ? skill.files.find((f) => f.path === path) : null;
      if (path && !file) {
        throw new SkillError(`'${name}' has no file '${path}'. Its files: ${skill.files.map((f) => f.path).join(", ") || "(none)"}. Nothing was saved.`);
      }
      const after = patchedText(file ? file.content : skill.content, input, path ?? "SKILL.md", name);
      if (file) return this.saveFile(tx, skill, file.path, cleanOrThrow(after, file.path), "patch", prov);
      return this.saveContent(tx, skill, after, "patch", prov);
    });
  }

  async writeFile(scope: Scope, name: string, filePath: string, raw: string, prov: Provenance): Promise<Skill> {
    const path = checkPath(filePath);
    const content = checkedFile(path, raw);
    return this.write(async (tx) => {
      const skill = await this.mutable(scope, name, tx);
      return this.saveFile(tx, skill, path, content, "write_file", prov);
    });
  }

  async removeFile(scope: Scope, name: string, filePath: string, prov: Provenance): Promise<Skill> {
    const path = checkPath(filePath);
    return this.write(async (tx) => {
      const skill = await this.mutable(scope, name, tx);
      const file = skill.files.find((f) => f.path === path);
      if (!file) throw new SkillError(`'${name}' has no file '${path}'. Its files: ${skill.files.map((f) => f.path).join(", ") || "(none)"}.`);
      // The file row goes, but its full text stays in the revision, so nothing is lost.
      await tx.skillFile.delete({ where: { id: file.id } });
      const files = skill.files.filter((f) => f.id !== file.id);
      await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: "remove_file", path, oldText: file.content, newText: null }, prov);
      return tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, files) } });
    });
  }

  /** The workspace's own skill of this name that is not archived, whatever its placement (an admin's archive). */
  async unarchived(scope: WorkspaceScope, name: string): Promise<Skill | null> {
    return this.db.skill.findFirst({ where: { workspaceId: scope.workspaceId, name, bundled: false, status: { not: "archived" } } });
  }

  async archive(scope: Scope, name: string, prov: Provenance): Promise<Skill> {
    return this.write(async (tx) => {
      const skill = await this.mutable(scope, name, tx);
      if (skill.pinned) throw new SkillError(`'${name}' is pinned by an admin and cannot be archived.`);
      await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: "archive", oldText: skill.content, newText: null }, prov);
      return tx.skill.update({ where: { id: skill.id }, data: { status: "archived" } });
    });
  }

  /** Admin action: an archived skill of this workspace is active again, with a revision. False if none. */
  async restore(scope: Scope, name: string, prov: Provenance): Promise<boolean> {
    return this.write(async (tx) => {
      const skill = await tx.skill.findFirst({ where: { workspaceId: scope.workspaceId, name, bundled: false, status: "archived" } });
      if (!skill) return false;
      const r = await tx.skill.updateMany({ where: { id: skill.id, status: "archived" }, data: { status: "active" } });
      if (r.count !== 1) return false;
      await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: "restore", oldText: null, newText: skill.content }, prov);
      return true;
    });
  }

  /** Admin action: pinned skills are exempt from archiving (by the agent now, by the curator later). */
  async setPinned(scope: Scope, name: string, pinned: boolean, prov: Provenance): Promise<boolean> {
    return this.write(async (tx) => {
      const skill = await tx.skill.findFirst({ where: { workspaceId: scope.workspaceId, name, bundled: false } });
      if (!skill) return false;
      if (skill.pinned !== pinned) {
        // A pinned skill is kept as it is by the curator: one it had marked stale is active again.
        await tx.skill.update({ where: { id: skill.id }, data: { pinned, ...(pinned && skill.status === "stale" ? { status: "active" } : {}) } });
        await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: pinned ? "pin" : "unpin", oldText: null, newText: null }, prov);
      }
      return true;
    });
  }

  private async saveContent(tx: Tx, skill: SkillWithFiles, raw: string, action: string, prov: Provenance): Promise<Skill> {
    const { content, description } = checkedSkillMd(skill.name, raw);
    if (content === skill.content) return skill;
    await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action, oldText: skill.content, newText: content }, prov);
    return tx.skill.update({ where: { id: skill.id }, data: { content, description, descriptionChecked: checkedMark(description), contentHash: hashOf(content, skill.files) } });
  }

  private async saveFile(tx: Tx, skill: SkillWithFiles, path: string, content: string, action: string, prov: Provenance): Promise<Skill> {
    const existing = skill.files.find((f) => f.path === path);
    if (existing?.content === content) return skill;
    if (existing) await tx.skillFile.update({ where: { id: existing.id }, data: { content } });
    else await tx.skillFile.create({ data: { skillId: skill.id, path, content } });
    const files = [...skill.files.filter((f) => f.path !== path), { path, content }];
    await writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action, path, oldText: existing?.content ?? null, newText: content }, prov);
    return tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, files) } });
  }

  /**
   * Brings the bundled skills in line with the shipped `skills/` folder: idempotent by content hash,
   * so start-ups with an unchanged folder write nothing. A bundled skill no longer shipped is archived.
   */
  async importBundled(bundled: readonly BundledSkill[]): Promise<{ created: number; updated: number; unchanged: number; archived: number }> {
    const prov: Provenance = { source: "import", actorId: null, sourceMessageId: null, reason: "bundled skills shipped with cairn" };
    const counts = { created: 0, updated: 0, unchanged: 0, archived: 0 };
    await this.write(async (tx) => {
      const existing = await tx.skill.findMany({ where: { bundled: true }, include: { files: true } });
      const byName = new Map(existing.map((s) => [s.name, s]));
      for (const b of bundled) {
        const cur = byName.get(b.name);
        byName.delete(b.name);
        if (cur && cur.contentHash === b.hash && cur.status === "active") {
          // Imported before descriptions were marked, or under other rules: marked now, once.
          if (!markHolds(cur.description, cur.descriptionChecked)) await tx.skill.update({ where: { id: cur.id }, data: { descriptionChecked: checkedMark(cur.description) } });
          counts.unchanged++;
          continue;
        }
        if (!cur) {
          const skill = await tx.skill.create({
            data: {
              workspaceId: null,
              scope: "team",
              name: b.name,
              description: b.description,
              descriptionChecked: checkedMark(b.description),
              content: b.content,
              bundled: true,
              contentHash: b.hash,
              source: "import",
              files: { create: b.files.map((f) => ({ path: f.path, content: f.content })) },
            },
          });
          await writeRevision(tx, { workspaceId: null, entityType: "skill", entityId: skill.id, action: "import", oldText: null, newText: b.content }, prov);
          counts.created++;
          continue;
        }
        await tx.skillFile.deleteMany({ where: { skillId: cur.id } });
        await tx.skill.update({
          where: { id: cur.id },
          data: {
            description: b.description,
            descriptionChecked: checkedMark(b.description),
            content: b.content,
            contentHash: b.hash,
            status: "active",
            files: { create: b.files.map((f) => ({ path: f.path, content: f.content })) },
          },
        });
        await writeRevision(tx, { workspaceId: null, entityType: "skill", entityId: cur.id, action: "import", oldText: cur.content, newText: b.content }, prov);
        counts.updated++;
      }
      for (const gone of byName.values()) {
        if (gone.status === "archived") continue;
        await tx.skill.update({ where: { id: gone.id }, data: { status: "archived" } });
        await writeRevision(tx, { workspaceId: null, entityType: "skill", entityId: gone.id, action: "archive", oldText: gone.content, newText: null }, { ...prov, reason: "no longer shipped with cairn" });
        counts.archived++;
      }
    });
    return counts;
  }
}
