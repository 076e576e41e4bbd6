/**
 * Proposed changes to team skills: a review's edit of a team skill's SKILL.md or support file,
 * kept with the exact text before and after until a teammate approves or rejects it
 * (src/learning/skill-proposals.ts says who may).
 *
 * Invariants kept here:
 * - Reads take a scope and put its workspace in the WHERE clause.
 * - A proposal is decided once: every decision moves it from pending in one conditional update.
 * - Applying writes the text in the same transaction as its revision (who approved, why), so
 *   `/cairn rollback` undoes it like any other change; it applies only while the skill's text is
 *   still the one the proposal was made against, else the proposal is stale and nothing is written.
 */
import type { Db } from "../db/client.ts";
import type { SkillProposal } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import type { ConversationScope, Scope, WorkspaceScope } from "../ground/types.ts";
import { parseSkillMd } from "./skillmd.ts";
import { hashOf } from "./store.ts";
import { LIVE_STATUSES } from "./visibility.ts";
import type { TextChange } from "./change.ts";

export type { SkillProposal };

/** What applying a proposal came to. */
export type Applied = { kind: "applied"; revisionId: string } | { kind: "stale"; why: string } | { kind: "closed"; status: string };

/** A cache over the skills an applied proposal changes (the skills index): dropped after each one. */
export interface Cached {
  forgetCached(): void;
}

const NEWEST = [{ createdAt: "desc" as const }, { id: "desc" as const }];

export class SkillProposalStore {
  constructor(
    private readonly db: Db,
    private readonly caches: readonly Cached[] = [],
  ) {}

  /** A pending proposal of `change` to the skill, by the person of `scope`, from its conversation. */
  propose(scope: Scope, skill: { id: string; name: string }, change: TextChange, reason: string): Promise<SkillProposal> {
    return this.db.skillProposal.create({
      data: {
        workspaceId: scope.workspaceId,
        skillId: skill.id,
        name: skill.name,
        path: change.path,
        oldText: change.oldText,
        newText: change.newText,
        reason,
        proposedById: scope.personId,
        conversationId: scope.conversationId,
      },
    });
  }

  /** The stored id of the proposal's post: a ✅ on it finds the proposal. */
  async posted(proposal: Pick<SkillProposal, "id" | "workspaceId">, messageId: number): Promise<void> {
    await this.db.skillProposal.updateMany({ where: { id: proposal.id, workspaceId: proposal.workspaceId }, data: { proposalMessageId: messageId } });
  }

  find(scope: WorkspaceScope, id: string): Promise<SkillProposal | null> {
    return this.db.skillProposal.findFirst({ where: { id, workspaceId: scope.workspaceId } });
  }

  /** The proposal posted as this message, if it was one. */
  postedAs(scope: WorkspaceScope, messageId: number): Promise<SkillProposal | null> {
    return this.db.skillProposal.findFirst({ where: { workspaceId: scope.workspaceId, proposalMessageId: messageId } });
  }

  /** Whether a review of this conversation, named by `tag` (the reason it writes with), proposed anything: a re-run stops. */
  async fromReview(scope: ConversationScope, tag: string): Promise<boolean> {
    const row = await this.db.skillProposal.findFirst({
      where: { workspaceId: scope.workspaceId, conversationId: scope.conversationId, OR: [{ reason: tag }, { reason: { startsWith: `${tag}: ` } }] },
      select: { id: true },
    });
    return row !== null;
  }

  /**
   * The workspace's pending proposals made in conversations of `channels` (the channels the viewer
   * can read; never a DM's), newest first: the text came from there.
   */
  async pending(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<SkillProposal[]> {
    const rows = await this.db.skillProposal.findMany({ where: { workspaceId: scope.workspaceId, status: "pending" }, orderBy: NEWEST });
    if (rows.length === 0 || channels.size === 0) return [];
    const seen = await this.db.conversation.findMany({
      where: { workspaceId: scope.workspaceId, id: { in: [...new Set(rows.map((r) => r.conversationId))] }, isDm: false, channelId: { in: [...channels] } },
      select: { id: true },
    });
    const readable = new Set(seen.map((c) => c.id));
    return rows.filter((r) => readable.has(r.conversationId));
  }

  /** Rejected by `personId`; false when it was no longer pending. */
  async reject(proposal: Pick<SkillProposal, "id" | "workspaceId">, personId: string): Promise<boolean> {
    const r = await this.db.skillProposal.updateMany({ where: { id: proposal.id, workspaceId: proposal.workspaceId, status: "pending" }, data: { status: "rejected", decidedById: personId } });
    return r.count === 1;
  }

  /** Applies the proposal's text with a revision of `prov` (its actor: who approved); stale when the skill moved past it. */
  apply(proposal: SkillProposal, prov: Provenance): Promise<Applied> {
    return this.db.$transaction((tx) => applyIn(tx, proposal, prov)).finally(() => this.caches.forEach((c) => c.forgetCached()));
  }
}

async function applyIn(tx: Tx, p: SkillProposal, prov: Provenance): Promise<Applied> {
  const decide = async (status: "applied" | "stale") =>
    (await tx.skillProposal.updateMany({ where: { id: p.id, workspaceId: p.workspaceId, status: "pending" }, data: { status, decidedById: prov.actorId } })).count === 1;
  const closed = async (): Promise<Applied> => ({ kind: "closed", status: (await tx.skillProposal.findFirst({ where: { id: p.id } }))?.status ?? "gone" });
  const stale = async (why: string): Promise<Applied> => ((await decide("stale")) ? { kind: "stale", why } : closed());
  const skill = await tx.skill.findFirst({ where: { id: p.skillId, workspaceId: p.workspaceId, bundled: false }, include: { files: true } });
  if (!skill || !LIVE_STATUSES.includes(skill.status)) return stale(`the skill \`${p.name}\` was archived since it was proposed`);
  const file = p.path === null ? null : (skill.files.find((f) => f.path === p.path) ?? null);
  const current = p.path === null ? skill.content : (file?.content ?? null);
  if (current !== p.oldText) return stale(`${p.path ?? "SKILL.md"} of \`${p.name}\` changed since it was proposed`);
  if (!(await decide("applied"))) return closed();
  const rev = { workspaceId: p.workspaceId, entityType: "skill" as const, entityId: skill.id, path: p.path, oldText: p.oldText, newText: p.newText };
  if (p.path === null) {
    const parsed = parseSkillMd(p.newText);
    await tx.skill.update({
      where: { id: skill.id },
      data: { content: p.newText, contentHash: hashOf(p.newText, skill.files), ...(parsed.ok ? { description: parsed.skill.description } : {}) },
    });
    return { kind: "applied", revisionId: await writeRevision(tx, { ...rev, action: "edit" }, prov) };
  }
  if (file) await tx.skillFile.update({ where: { id: file.id }, data: { content: p.newText } });
  else await tx.skillFile.create({ data: { skillId: skill.id, path: p.path, content: p.newText } });
  const files = [...skill.files.filter((f) => f.path !== p.path), { path: p.path, content: p.newText }];
  await tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, files) } });
  return { kind: "applied", revisionId: await writeRevision(tx, { ...rev, action: "write_file" }, prov) };
}
