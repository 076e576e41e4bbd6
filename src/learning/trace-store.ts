/**
 * What each reply drew on (tool calls, skills read, lessons shown) and how people reacted to it:
 * the evidence the learning loop, the curator and the weekly report count from. One row per reply,
 * written when the reply is stored. What came of a reply is here too: the skills it read credited
 * for a praised answer, and whether a review run after it wrote anything already.
 */
import { z } from "zod";
import type { Db } from "../db/client.ts";
import type { ConversationScope, WorkspaceScope } from "../ground/types.ts";
import type { Signal } from "./emoji.ts";

export interface TurnFacts {
  replyMessageId: number;
  workspaceId: string;
  conversationId: string;
  toolCalls: readonly { name: string; input?: unknown }[];
  lessonIds: readonly string[];
  /** The team rules in the turn's prompt (the session's snapshot). */
  ruleIds?: readonly string[];
}

const names = z.array(z.string()).catch([]);

/** The skills a turn read: skill_view calls' `name`. */
export function skillsRead(calls: TurnFacts["toolCalls"]): string[] {
  const out = new Set<string>();
  for (const c of calls) {
    if (c.name !== "skill_view") continue;
    const parsed = z.object({ name: z.string() }).safeParse(c.input);
    if (parsed.success) out.add(parsed.data.name);
  }
  return [...out];
}

export class TraceStore {
  constructor(private readonly db: Db) {}

  /**
   * A turn that used no tool and was shown no lesson leaves no row (most turns: one statement less
   * on every message); a reaction on its reply creates the row then (`count`).
   */
  async record(f: TurnFacts): Promise<void> {
    const rules = f.ruleIds ?? [];
    if (f.toolCalls.length === 0 && f.lessonIds.length === 0 && rules.length === 0) return;
    const data = {
      workspaceId: f.workspaceId,
      conversationId: f.conversationId,
      toolCalls: f.toolCalls.length,
      skills: JSON.stringify(skillsRead(f.toolCalls)),
      lessons: JSON.stringify([...f.lessonIds]),
      rules: JSON.stringify([...rules]),
    };
    await this.db.replyTrace.upsert({ where: { messageId: f.replyMessageId }, create: { messageId: f.replyMessageId, ...data }, update: data });
  }

  async get(scope: WorkspaceScope, replyMessageId: number): Promise<{ toolCalls: number; skills: string[]; lessons: string[]; rules: string[]; positive: number; negative: number } | null> {
    const row = await this.db.replyTrace.findFirst({ where: { messageId: replyMessageId, workspaceId: scope.workspaceId } });
    if (!row) return null;
    return {
      toolCalls: row.toolCalls,
      skills: names.parse(safeJson(row.skills)),
      lessons: names.parse(safeJson(row.lessons)),
      rules: names.parse(safeJson(row.rules)),
      positive: row.positive,
      negative: row.negative,
    };
  }

  /**
   * The team rules that were in the prompt of answers corrected since `since` (a 👎 or a typed
   * correction, not one dropped), with when each such answer was corrected: a rule in front of
   * several did not prevent the mistakes, or caused them.
   */
  async rulesBeforeCorrections(scope: WorkspaceScope, since: Date): Promise<Map<string, Date[]>> {
    const { workspaceId } = scope;
    const corrections = await this.db.correction.findMany({ where: { workspaceId, createdAt: { gte: since }, status: { not: "dropped" } }, select: { replyMessageId: true, createdAt: true } });
    const found = new Map<string, Date[]>();
    if (corrections.length === 0) return found;
    const when = new Map(corrections.map((c) => [c.replyMessageId, c.createdAt]));
    const traces = await this.db.replyTrace.findMany({ where: { workspaceId, messageId: { in: [...when.keys()] } }, select: { messageId: true, rules: true } });
    for (const t of traces) for (const id of new Set(names.parse(safeJson(t.rules)))) found.set(id, [...(found.get(id) ?? []), when.get(t.messageId)!]);
    return found;
  }

  /** Counts a reaction on the reply (a removed reaction takes its count back, never below zero). */
  async count(scope: ConversationScope, replyMessageId: number, signal: Signal, delta: 1 | -1): Promise<void> {
    const { workspaceId, conversationId } = scope;
    const field = signal === "positive" ? "positive" : "negative";
    if (delta > 0) {
      const held = await this.db.replyTrace.updateMany({ where: { messageId: replyMessageId, workspaceId }, data: { [field]: { increment: 1 } } });
      if (held.count > 0) return;
      // No row yet (the turn drew on nothing): this reaction starts it. A racing reaction's create wins; count again.
      try {
        await this.db.replyTrace.create({ data: { messageId: replyMessageId, workspaceId, conversationId, [field]: 1 } });
      } catch {
        await this.db.replyTrace.updateMany({ where: { messageId: replyMessageId, workspaceId }, data: { [field]: { increment: 1 } } });
      }
    } else {
      await this.db.replyTrace.updateMany({ where: { messageId: replyMessageId, workspaceId, [field]: { gt: 0 } }, data: { [field]: { decrement: 1 } } });
    }
  }

  /** A praised reply: every skill it read (the workspace's, or bundled) counts one more success. */
  async creditSkills(scope: WorkspaceScope, names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    await this.db.skill.updateMany({
      where: { name: { in: [...names] }, OR: [{ workspaceId: scope.workspaceId }, { bundled: true }] },
      data: { successCount: { increment: 1 } },
    });
  }

  /** Whether a run of this review wrote already: its revisions carry its tag as their reason (alone, or before the model's). */
  async reviewWrote(scope: WorkspaceScope, questionId: number, tag: string): Promise<boolean> {
    const row = await this.db.revision.findFirst({
      where: { workspaceId: scope.workspaceId, source: "review", sourceMessageId: questionId, OR: [{ reason: tag }, { reason: { startsWith: `${tag}: ` } }] },
      select: { id: true },
    });
    return row !== null;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return [];
  }
}
