/**
 * What decides when a conversation is reviewed (review-triggers.ts): where its last memory and
 * skill reviews read through (marks on the conversation, moved forward only), what was said and
 * done since, and which conversations went quiet.
 */
import { typedCommand } from "../ground/typed-command.ts";
import type { Database, Db } from "../db/client.ts";
import { lateralMany, readBatch } from "../db/read-batch.ts";
import type { Provider } from "../db/migrate.ts";
import { conversationScope } from "../db/scopes.ts";
import type { ConversationScope } from "../ground/types.ts";
import { receivedCorrectionColumn } from "./correction-store.ts";

/** Replies looked at for the last answer: a few typed commands in a row are skipped. */
const LAST_REPLIES = 5;

/** A review job's unique key: one review per conversation and reply it reads through. */
export const reviewKey = (conversationId: string, replyMessageId: number): string => `review:${conversationId}:${replyMessageId}`;

export interface ReviewedReply {
  id: number;
  /** The person's message it answered: what is counted "since" starts after it. */
  replyToId: number;
}

/** What was said and done since each review's mark (0 where that review read past the reply). */
export interface ReviewCounts {
  /** Person messages since the memory review's mark, through the reply's message (`personMessages`). */
  turns: number;
  /** Tool calls of the turns since the skill review's mark, through the reply (`toolCalls`). */
  calls: number;
}

/** What a posted reply triggers, read at once (`afterDelivered`). */
export interface AfterDelivery {
  reply: ReviewedReply;
  scope: ConversationScope;
  since: ReviewCounts;
  /** The correction the reply's message was taken as (CorrectionStore.receivedFor), if any. */
  correctionId: string | null;
}

/**
 * `afterDelivered`'s statement: the reply, and beside it `lastReviewed`'s marks read into
 * `personMessages` and `toolCalls` (each only where its review is before the reply, as
 * review-triggers.ts asks) and the correction column. Placeholders, in the text's order (SQLite's
 * `?` bind by place): whether tool calls count (1 or 0), the reply's id, its conversation. `at`
 * writes them otherwise (the batch below: columns of its rows).
 */
export function afterDeliveredSql(provider: Provider, at?: (n: number) => string): string {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  const p = at ?? ((n: number): string => (pg ? `$${n}` : "?"));
  const int = (e: string): string => (pg ? `CAST(${e} AS integer)` : e);
  const r = (c: string): string => `r.${q(c)}`;
  // `lastReviewed` reads a mark whose reply answered nothing as no mark.
  const marked = (m: string): string => `${m}.${q("replyToId")} IS NOT NULL`;
  const before = (m: string): string => `(NOT ${marked(m)} OR ${m}.id < r.id)`;
  const turns = `(SELECT count(*) FROM ${q("Message")} p WHERE p.${q("conversationId")} = ${r("conversationId")} AND p.${q("workspaceId")} = ${r("workspaceId")} AND p.role = 'user' AND p.id > (CASE WHEN ${marked("mm")} THEN mm.${q("replyToId")} ELSE 0 END) AND p.id <= ${r("replyToId")})`;
  const calls = `(SELECT COALESCE(SUM(t.${q("toolCalls")}), 0) FROM ${q("ReplyTrace")} t WHERE t.${q("conversationId")} = ${r("conversationId")} AND t.${q("workspaceId")} = ${r("workspaceId")} AND t.${q("messageId")} > (CASE WHEN ${marked("sm")} THEN sm.id ELSE 0 END) AND t.${q("messageId")} <= r.id)`;
  const mark = (alias: string, column: string): string => `LEFT JOIN ${q("Message")} ${alias} ON ${alias}.id = k.${q(column)} AND ${alias}.${q("conversationId")} = ${r("conversationId")}`;
  return (
    `SELECT r.id, ${r("replyToId")}, ${r("workspaceId")}, ${r("conversationId")}, ` +
    `CASE WHEN ${before("mm")} THEN ${int(turns)} ELSE 0 END, ` +
    `CASE WHEN ${p(1)} > 0 AND ${before("sm")} THEN ${int(calls)} ELSE 0 END, ` +
    `${receivedCorrectionColumn(provider, r("workspaceId"), r("conversationId"), r("replyToId"))} ` +
    `FROM ${q("Message")} r LEFT JOIN ${q("Conversation")} k ON k.id = ${r("conversationId")} AND k.${q("workspaceId")} = ${r("workspaceId")} ` +
    `${mark("mm", "reviewedMemoryThrough")} ${mark("sm", "reviewedSkillsThrough")} ` +
    `WHERE r.id = ${p(2)} AND ${r("conversationId")} = ${p(3)} AND r.role = 'assistant' AND r.status = 'sent'`
  );
}

/**
 * `afterDeliveredSql` for many replies in one statement (PostgreSQL; db/read-batch.ts): a burst's
 * replies are posted together, and one statement each queued the conversations' next reads behind
 * them.
 */
const AFTER_DELIVERED_MANY = lateralMany([["calls", "integer"], ["reply", "integer"], ["conv", "text"]], (v) =>
  afterDeliveredSql("postgresql", (n) => v(["calls", "reply", "conv"][n - 1]!)),
);

export class ReviewStore {
  private readonly afterDeliveredSql: string;
  /** `afterDeliveredSql`'s rows for (calls, reply, conversation): batched with others' on PostgreSQL. */
  private readonly afterDeliveredRows: (params: [number, number, string]) => Promise<unknown[][]>;

  constructor(
    private readonly db: Db,
    private readonly database: Pick<Database, "provider" | "direct">,
  ) {
    this.afterDeliveredSql = afterDeliveredSql(database.provider);
    const one = (params: [number, number, string]) => database.direct.rows(this.afterDeliveredSql, params);
    this.afterDeliveredRows = database.provider === "postgresql" ? readBatch(database.direct, { one, many: AFTER_DELIVERED_MANY, params: (item) => item }) : one;
  }

  /**
   * What a reply posted in the conversation triggers (Learning.afterDelivered), in one statement: it
   * runs on the delivery path, where the conversation's next message waits for it. Null when it is
   * no sent answer of the conversation, or answered nothing. `calls`: whether tool calls are counted.
   */
  async afterDelivered(conversationId: string, replyId: number, calls: boolean): Promise<AfterDelivery | null> {
    const [row] = await this.afterDeliveredRows([calls ? 1 : 0, replyId, conversationId]);
    if (!row || row[1] === null) return null;
    const [id, replyToId, workspaceId, conversation, turns, toolCalls, correctionId] = row;
    return {
      reply: { id: Number(id), replyToId: Number(replyToId) },
      scope: conversationScope({ id: String(conversation), workspaceId: String(workspaceId) }),
      since: { turns: Number(turns), calls: Number(toolCalls) },
      correctionId: correctionId === null || correctionId === undefined ? null : String(correctionId),
    };
  }

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
