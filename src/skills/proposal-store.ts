/**
 * Proposed changes to team skills: a review's edit of a team skill's SKILL.md or support file, or a
 * turn's by someone not trusted to share alone, kept with the exact text before and after until a
 * teammate approves or rejects it (src/learning/skill-proposals.ts says who may). And skills
 * proposed for a scope (`toScope`): one asked for the team and kept where it was said, or one the
 * safety screen held (status "held", in no index); approval moves it there (tools/skill-reach.ts).
 *
 * Invariants kept here:
 * - Reads take a scope and put its workspace in the WHERE clause.
 * - A proposal is decided once: every decision moves it from pending in one conditional update.
 * - Applying writes the text in the same transaction as its revision (who approved, why), so
 *   `/cairn rollback` undoes it like any other change; it applies only while the skill's text is
 *   still the one the proposal was made against, else the proposal is stale and nothing is written;
 *   a skill proposed for a scope moves only while it is exactly as proposed (no text or file since).
 */
import type { Db } from "../db/client.ts";
import type { SkillProposal } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import type { ConversationScope, Scope, WorkspaceScope } from "../ground/types.ts";
import { checkedMark } from "../safety/scanner.ts";
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

  /** A pending proposal of `change` to the skill, by the person of `scope`, from its conversation (and from `sourceMessageId`, a turn's). */
  propose(scope: Scope, skill: { id: string; name: string }, change: TextChange, reason: string, sourceMessageId: number | null = null): Promise<SkillProposal> {
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
        sourceMessageId,
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

  /** Pending proposals a turn made answering this person message (a ✅ on cairn's reply to it approves them). */
  fromMessage(scope: WorkspaceScope, sourceMessageId: number): Promise<SkillProposal[]> {
    return this.db.skillProposal.findMany({ where: { workspaceId: scope.workspaceId, sourceMessageId, status: "pending" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
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
   * can read), newest first: the text came from there. And those a person made in a DM: they asked
   * for the whole team to have it, and no one else could approve it otherwise (reviews propose
   * nothing from a DM).
   */
  async pending(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<SkillProposal[]> {
    const rows = await this.db.skillProposal.findMany({ where: { workspaceId: scope.workspaceId, status: "pending" }, orderBy: NEWEST });
    if (rows.length === 0) return [];
    const seen = await this.db.conversation.findMany({
      where: { workspaceId: scope.workspaceId, id: { in: [...new Set(rows.map((r) => r.conversationId))] }, OR: [{ isDm: false, channelId: { in: [...channels] } }, { isDm: true }] },
      select: { id: true },
    });
    const readable = new Set(seen.map((c) => c.id));
    return rows.filter((r) => readable.has(r.conversationId));
  }

  /**
   * Rejected by `personId`; false when it was no longer pending. A skill the screen held goes with
   * it (archived, its text kept in the revision); one kept where it was said stays there.
   */
  async reject(proposal: Pick<SkillProposal, "id" | "workspaceId" | "skillId" | "toScope">, personId: string): Promise<boolean> {
    const done = await this.db.$transaction(async (tx) => {
      const r = await tx.skillProposal.updateMany({ where: { id: proposal.id, workspaceId: proposal.workspaceId, status: "pending" }, data: { status: "rejected", decidedById: personId } });
      if (r.count !== 1) return false;
      if (proposal.toScope === null) return true;
      const held = await tx.skill.findFirst({ where: { id: proposal.skillId, workspaceId: proposal.workspaceId, status: "held" } });
      if (held && (await tx.skill.updateMany({ where: { id: held.id, status: "held" }, data: { status: "archived" } })).count === 1) {
        await writeRevision(tx, { workspaceId: held.workspaceId, entityType: "skill", entityId: held.id, action: "reject_held", oldText: held.content, newText: null }, { source: "tool", actorId: personId, sourceMessageId: null, reason: `proposal ${proposal.id} rejected` });
      }
      return true;
    });
    if (done && proposal.toScope !== null) this.caches.forEach((c) => c.forgetCached());
    return done;
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
  if (p.toScope !== null) return moveIn(tx, p, p.toScope, prov, { decide, stale, closed });
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
      data: { content: p.newText, contentHash: hashOf(p.newText, skill.files), ...(parsed.ok ? { description: parsed.skill.description, descriptionChecked: checkedMark(parsed.skill.description) } : {}) },
    });
    return { kind: "applied", revisionId: await writeRevision(tx, { ...rev, action: "edit" }, prov) };
  }
  if (file) await tx.skillFile.update({ where: { id: file.id }, data: { content: p.newText } });
  else await tx.skillFile.create({ data: { skillId: skill.id, path: p.path, content: p.newText } });
  const files = [...skill.files.filter((f) => f.path !== p.path), { path: p.path, content: p.newText }];
  await tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, files) } });
  return { kind: "applied", revisionId: await writeRevision(tx, { ...rev, action: "write_file" }, prov) };
}

/**
 * A skill proposed for `toScope` moved there (and a held one made active), with a revision: only
 * while it is exactly the text the approver was shown, with no support file added since (the
 * channel could have changed it; the workspace would get what nobody approved).
 */
interface Deciding {
  decide(status: "applied"): Promise<boolean>;
  stale(why: string): Promise<Applied>;
  closed(): Promise<Applied>;
}

async function moveIn(tx: Tx, p: SkillProposal, toScope: string, prov: Provenance, { decide, stale, closed }: Deciding): Promise<Applied> {
  const skill = await tx.skill.findFirst({ where: { id: p.skillId, workspaceId: p.workspaceId, bundled: false } });
  if (!skill || !(skill.status === "held" || LIVE_STATUSES.includes(skill.status))) return stale(`the skill \`${p.name}\` was archived since it was proposed`);
  if (skill.contentHash !== hashOf(p.newText, [])) return stale(`\`${p.name}\` was changed since it was proposed`);
  if (!(await decide("applied"))) return closed();
  const at = { scope: toScope, ownerId: toScope === "user" ? skill.ownerId : null, channelKey: toScope === "channel" ? skill.channelKey : null };
  await tx.skill.update({ where: { id: skill.id }, data: { ...at, ...(skill.status === "held" ? { status: "active" } : {}) } });
  const action = skill.status === "held" ? "release" : "share";
  return { kind: "applied", revisionId: await writeRevision(tx, { workspaceId: p.workspaceId, entityType: "skill", entityId: skill.id, action, oldText: null, newText: skill.content }, prov) };
}
