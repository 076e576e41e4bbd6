/**
 * What each reply drew on (tool calls, skills read, lessons shown, the rules and facts in its prompt,
 * the searches it ran and the messages they returned) and how people reacted to it:
 * the evidence the learning loop, the curator and the weekly report count from. One row per reply,
 * written when the reply is stored. What came of a reply is here too: the skills it read credited
 * for a praised answer, and whether a review run after it wrote anything already.
 */
import { z } from "zod";
import type { Database, Db } from "../db/client.ts";
import { sqlTime, type SqlParam } from "../db/direct.ts";
import type { Provider } from "../db/migrate.ts";
import type { ConversationScope, WorkspaceScope } from "../ground/types.ts";
import type { Signal } from "./emoji.ts";

/** What a turn drew on: its tool calls, and what its prompt held (lessons, rules, facts) or a search showed it. */
export interface TurnDrew {
  toolCalls: readonly { name: string; input?: unknown }[];
  lessonIds: readonly string[];
  /** The team rules in the turn's prompt (the session's snapshot). */
  ruleIds?: readonly string[];
  /** The memory facts in its prompt: the snapshot's team and channel facts, and the speaker's profile. */
  factIds?: readonly string[];
  /** Its session_search calls, each with the stored messages it returned, best first. */
  searches?: readonly TraceSearch[];
}

export interface TurnFacts extends TurnDrew {
  replyMessageId: number;
  workspaceId: string;
  conversationId: string;
}

export interface TraceSearch {
  query: string;
  messageIds: readonly number[];
}

/** A reply's trace as stored: what it drew on, and the reactions it got. */
export interface ReplyTrace {
  toolCalls: number;
  skills: string[];
  lessons: string[];
  rules: string[];
  facts: string[];
  searches: { query: string; messageIds: number[] }[];
  positive: number;
  negative: number;
}

const names = z.array(z.string()).catch([]);
const searchList = z.array(z.object({ query: z.string(), messageIds: z.array(z.number().int()) })).catch([]);

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

/** The columns a turn writes, in the order `traceParams` gives their values. */
const TRACE_COLUMNS = ["workspaceId", "conversationId", "toolCalls", "skills", "lessons", "rules", "facts", "searches", "createdAt"] as const;
/** PostgreSQL types a bare parameter in a select list as text: these are cast to their columns' types. */
const PG_TYPES: Partial<Record<(typeof TRACE_COLUMNS)[number], string>> = { toolCalls: "integer", createdAt: "timestamp(3)" };

/**
 * A turn's trace written as an upsert, for the reply whose id `id` is (a placeholder, or a column of
 * `from`), its values in placeholders from `first` on (`?` on SQLite). A reaction may have started
 * the row already: what the turn drew on is written over it, its counts kept.
 */
export function traceUpsertSql(provider: Provider, id: string, first: number, from = ""): string {
  const pg = provider === "postgresql";
  const p = (i: number): string => (pg ? `$${first + i}` : "?");
  const values = TRACE_COLUMNS.map((c, i) => (pg && PG_TYPES[c] ? `CAST(${p(i)} AS ${PG_TYPES[c]})` : p(i))).join(", ");
  return upsertOf(from ? `SELECT ${id}, ${values} ${from}` : `VALUES (${id}, ${values})`);
}

/**
 * `traceUpsertSql` for many replies in one statement (PostgreSQL): the traces' values as arrays in
 * placeholders from `first` on (`traceParams` of each, one array per value), then an array of the
 * message each reply answers, which joins a trace to its reply: `replies` (a WITH query of the
 * same statement) returns each reply's `id` and `replyToId`.
 */
export function traceUpsertManySql(replies: string, first: number): string {
  const columns = TRACE_COLUMNS.map((c, i) => `$${first + i}::${PG_TYPES[c] ?? "text"}[]`);
  const answers = `$${first + TRACE_COLUMNS.length}::integer[]`;
  const t = TRACE_COLUMNS.map((_, i) => `c${i}`);
  return upsertOf(`SELECT ${replies}.id, ${t.map((c) => `t.${c}`).join(", ")} FROM ${replies} JOIN unnest(${[...columns, answers].join(", ")}) AS t(${[...t, "answers"].join(", ")}) ON t.answers = ${replies}."replyToId"`);
}

/** The upsert of the trace rows `body` selects (the reply's id, then TRACE_COLUMNS' values). */
function upsertOf(body: string): string {
  const q = (c: string): string => `"${c}"`;
  const updates = TRACE_COLUMNS.filter((c) => c !== "createdAt").map((c) => `${q(c)} = excluded.${q(c)}`).join(", ");
  return `INSERT INTO ${q("ReplyTrace")} (${q("messageId")}, ${TRACE_COLUMNS.map(q).join(", ")}) ${body} ON CONFLICT (${q("messageId")}) DO UPDATE SET ${updates}`;
}

/**
 * The values of `traceUpsertSql`, or null when the turn used no tool and had no lesson, rule or
 * fact in front of it: it leaves no row (a workspace with no memory yet: one statement less on every
 * message), and a reaction on its reply creates the row then (`count`).
 */
export function traceParams(provider: Provider, f: Omit<TurnFacts, "replyMessageId">): SqlParam[] | null {
  const rules = f.ruleIds ?? [];
  const facts = f.factIds ?? [];
  if (f.toolCalls.length === 0 && f.lessonIds.length === 0 && rules.length === 0 && facts.length === 0) return null;
  const searches = (f.searches ?? []).map((x) => ({ query: x.query, messageIds: [...x.messageIds] }));
  // The wall clock, as Prisma's @default(now()) wrote it before.
  return [f.workspaceId, f.conversationId, f.toolCalls.length, JSON.stringify(skillsRead(f.toolCalls)), JSON.stringify([...f.lessonIds]), JSON.stringify([...rules]), JSON.stringify([...facts]), JSON.stringify(searches), sqlTime(provider, new Date())];
}

export class TraceStore {
  private readonly upsert: string;

  constructor(
    private readonly db: Db,
    private readonly database: Pick<Database, "provider" | "direct">,
  ) {
    this.upsert = traceUpsertSql(database.provider, database.provider === "postgresql" ? "$1" : "?", 2);
  }

  /** What a turn drew on, stored for its reply (nothing when it drew on nothing: `traceParams`). */
  async record(f: TurnFacts): Promise<void> {
    const params = traceParams(this.database.provider, f);
    if (params) await this.database.direct.rows(this.upsert, [f.replyMessageId, ...params]);
  }

  async get(scope: WorkspaceScope, replyMessageId: number): Promise<ReplyTrace | null> {
    const row = await this.db.replyTrace.findFirst({ where: { messageId: replyMessageId, workspaceId: scope.workspaceId } });
    if (!row) return null;
    return {
      toolCalls: row.toolCalls,
      skills: names.parse(safeJson(row.skills)),
      lessons: names.parse(safeJson(row.lessons)),
      rules: names.parse(safeJson(row.rules)),
      facts: names.parse(safeJson(row.facts)),
      searches: searchList.parse(safeJson(row.searches)),
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
