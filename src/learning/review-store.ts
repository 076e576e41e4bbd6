/**
 * What decides when a conversation is reviewed (review-triggers.ts): where its last memory and
 * skill reviews read through (marks on the conversation, moved forward only), what was said and
 * done since, and which conversations went quiet.
 */
import { typedCommand } from "../ground/typed-command.ts";
import type { Db } from "../db/client.ts";
import { conversationScope } from "../db/scopes.ts";
import type { ConversationScope } from "../ground/types.ts";

/** Replies looked at for the last answer: a few typed commands in a row are skipped. */
const LAST_REPLIES = 5;

/** A review job's unique key: one review per conversation and reply it reads through. */
export const reviewKey = (conversationId: string, replyMessageId: number): string => `review:${conversationId}:${replyMessageId}`;

export interface ReviewedReply {
  id: number;
  /** The person's message it answered: what is counted "since" starts after it. */
  replyToId: number;
}

export class ReviewStore {
  constructor(private readonly db: Db) {}

  /** The replies the conversation's latest memory and skill reviews read through; null where there was none. */
  async lastReviewed(scope: ConversationScope): Promise<{ memory: ReviewedReply | null; skills: ReviewedReply | null }> {
    const row = await this.db.conversation.findFirst({ where: { id: scope.conversationId, workspaceId: scope.workspaceId }, select: { reviewedMemoryThrough: true, reviewedSkillsThrough: true } });
    const ids = [row?.reviewedMemoryThrough, row?.reviewedSkillsThrough].filter((id): id is number => typeof id === "number");
    const replies = ids.length ? await this.db.message.findMany({ where: { id: { in: ids }, conversationId: scope.conversationId }, select: { id: true, replyToId: true } }) : [];
    const of = (id: number | null | undefined): ReviewedReply | null => {
      const r = replies.find((m) => m.id === id);
      return r?.replyToId ? { id: r.id, replyToId: r.replyToId } : null;
    };
    return { memory: of(row?.reviewedMemoryThrough), skills: of(row?.reviewedSkillsThrough) };
  }

  /** Moves the conversation's marks forward to `replyId` (never back): a review of them was queued. */
  async mark(scope: ConversationScope, kinds: { memory: boolean; skills: boolean }, replyId: number): Promise<void> {
    const where = { id: scope.conversationId, workspaceId: scope.workspaceId };
    if (kinds.memory) await this.db.conversation.updateMany({ where: { ...where, OR: [{ reviewedMemoryThrough: null }, { reviewedMemoryThrough: { lt: replyId } }] }, data: { reviewedMemoryThrough: replyId } });
    if (kinds.skills) await this.db.conversation.updateMany({ where: { ...where, OR: [{ reviewedSkillsThrough: null }, { reviewedSkillsThrough: { lt: replyId } }] }, data: { reviewedSkillsThrough: replyId } });
  }

  /** Person messages of the conversation after `afterId` (exclusive) through `throughId`. */
  personMessages(scope: ConversationScope, afterId: number | null, throughId: number): Promise<number> {
    return this.db.message.count({ where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, role: "user", id: { gt: afterId ?? 0, lte: throughId } } });
  }

  /** Tool calls of the conversation's turns whose replies are after `afterReplyId` through `throughReplyId`. */
  async toolCalls(scope: ConversationScope, afterReplyId: number | null, throughReplyId: number): Promise<number> {
    const sum = await this.db.replyTrace.aggregate({
      where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, messageId: { gt: afterReplyId ?? 0, lte: throughReplyId } },
      _sum: { toolCalls: true },
    });
    return sum._sum.toolCalls ?? 0;
  }

  /**
   * The conversation's latest answer to a person, or null. A command typed without its slash gets a
   * stored reply too (its answer, or the pointer to it: turn/intake.ts); that is no answer of the
   * model's to judge, correct or explain, so the answer before it is the last one.
   */
  async lastReply(scope: ConversationScope): Promise<ReviewedReply | null> {
    const replies = await this.db.message.findMany({
      where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, role: "assistant", status: "sent", replyToId: { not: null } },
      orderBy: { id: "desc" },
      take: LAST_REPLIES,
      select: { id: true, replyToId: true },
    });
    if (replies.length === 0) return null;
    const asked = await this.db.message.findMany({ where: { id: { in: replies.map((r) => r.replyToId!) }, workspaceId: scope.workspaceId }, select: { id: true, text: true } });
    const commands = new Set(asked.filter((m) => typedCommand(m.text) !== null).map((m) => m.id));
    const reply = replies.find((r) => !commands.has(r.replyToId!));
    return reply ? { id: reply.id, replyToId: reply.replyToId! } : null;
  }

  /** Conversations with cairn whose last message is in [from, to): the ones that went quiet. */
  async quiet(from: Date, to: Date, limit: number): Promise<{ scope: ConversationScope; lastMessageAt: Date }[]> {
    const rows = await this.db.conversation.findMany({
      where: { kind: "chat", lastMessageAt: { gte: from, lt: to } },
      orderBy: { lastMessageAt: "asc" },
      take: limit,
      select: { id: true, workspaceId: true, lastMessageAt: true },
    });
    return rows.map((r) => ({ scope: conversationScope(r), lastMessageAt: r.lastMessageAt }));
  }
}
