/**
 * A team's nine weeks, written as plain rows with explicit dates for the weekly report's tests, and
 * the report's figures computed from the same list by the test's own reading of docs/report.md
 * (never by calling src/report/).
 *
 * Days are counted back from the slot (`END`): day 0 is the slot itself (next week's), days in
 * (0, 7] are this week, (7, 14] last week, and so on.
 */
import type { Db } from "../../src/db/client.ts";
import { INTERNAL_ERROR_REPLY, MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";

export const DAY = 24 * 60 * 60 * 1000;
export type Name = "Ana" | "Bo" | "Cy" | "Dan" | "Eve";
export const NAMES: readonly Name[] = ["Ana", "Bo", "Cy", "Dan", "Eve"];

export interface ReplySpec {
  week: number;
  index: number;
  /** Skills read, as the trace records them (duplicates included). */
  skills?: string[];
  /** Entry ids shown with the reply. */
  shown?: string[];
  correction?: "asked" | "received" | "learned" | "dropped";
}

export interface EntrySpec {
  id: string;
  scope: "user" | "channel" | "team";
  kind: "fact" | "lesson" | "rule";
  text: string;
  status: "active" | "pending" | "archived";
  by: Name;
  /** Days before the slot. */
  created: number;
  /** Revisions after the creation one: [action, days before the slot, actor]. */
  revs?: [string, number, Name][];
  /** The creation revision's action and actor, when not "add" by `by`. */
  first?: [string, Name];
  /** When it was in force, in days before the slot (null: never / still). The test's own statement. */
  inForce: [number | null, number | null];
  /** Learned from a correction by `by`: the lesson case is stored. */
  fromCorrection?: boolean;
  /**
   * The question whose answer was corrected: this week's reply `reply` (its question given `text`),
   * or the reply of `turns[turn]`. Without it the case names no stored reply.
   */
  asked?: { reply: number; text: string } | { turn: number };
}

/** A turn of this week besides the replies: its reply failed (the model's apology, another failure) or never came. */
export interface TurnSpec {
  who: Name;
  /** A DM of its own, or a new thread of the team's channel. */
  where: "dm" | "thread";
  question: string;
  /** Days before the slot. */
  days: number;
  reply: "model" | "other" | "none";
}

export interface SkillSpec {
  name: string;
  created: number;
  useCount: number;
  status?: "active" | "archived";
  revs?: [string, number][];
}

export interface TeamSpec {
  platform: "slack" | "discord" | "console";
  externalId: string;
  name: string;
  channel: string;
  /** Replies per week, index 0 = this week, up to 8 (nine weeks). */
  replies: number[];
  /** Corrections per week, on that week's first replies. */
  corrections: number[];
  traces: ReplySpec[];
  entries: EntrySpec[];
  skills: SkillSpec[];
  turns?: TurnSpec[];
}

export const at = (end: Date, daysBefore: number) => new Date(end.getTime() - daysBefore * DAY);
/** Reply `index` of `week`: the week's start, then every 12 hours. */
export const replyTime = (end: Date, week: number, index: number) => new Date(end.getTime() - (week + 1) * 7 * DAY + index * 12 * 60 * 60 * 1000);

export interface Seeded {
  workspaceId: string;
  people: Record<Name, string>;
}

export async function seedTeam(db: Db, end: Date, spec: TeamSpec): Promise<Seeded> {
  const ws = await db.workspace.create({ data: { platform: spec.platform, externalId: spec.externalId, name: spec.name, createdAt: at(end, 70) } });
  const people = {} as Record<Name, string>;
  for (const n of NAMES) {
    people[n] = (await db.person.create({ data: { workspaceId: ws.id, externalId: `${spec.externalId}-${n}`, displayName: n } })).id;
  }
  const conv = await db.conversation.create({
    data: { workspaceId: ws.id, key: `${spec.platform}:${spec.externalId}:${spec.channel}:main`, channelId: spec.channel, isDm: false, createdAt: at(end, 70) },
  });
  const say = (role: "user" | "assistant", createdAt: Date, extra: { replyToId?: number | null; status?: string; authorId?: string | null } = {}) =>
    db.message.create({ data: { workspaceId: ws.id, conversationId: conv.id, role, text: `${role} at ${createdAt.toISOString()}`, status: extra.status ?? (role === "user" ? "answered" : "sent"), createdAt, authorId: extra.authorId ?? null, replyToId: extra.replyToId ?? null } });
  const reply = async (t: Date, status = "sent") => {
    const q = await say("user", new Date(t.getTime() - 60_000), { authorId: people.Ana });
    return say("assistant", t, { replyToId: q.id, status });
  };
  /** This week's replies by index, with their questions. */
  const thisWeek: { question: number; reply: number }[] = [];
  for (let week = 0; week < spec.replies.length; week++) {
    for (let i = 0; i < spec.replies[week]!; i++) {
      const t = replyTime(end, week, i);
      const r = await reply(t);
      if (week === 0) thisWeek[i] = { question: r.replyToId!, reply: r.id };
      const trace = spec.traces.find((x) => x.week === week && x.index === i);
      const corrected = i < (spec.corrections[week] ?? 0);
      if (trace) await db.replyTrace.create({ data: { messageId: r.id, workspaceId: ws.id, conversationId: conv.id, skills: JSON.stringify(trace.skills ?? []), lessons: JSON.stringify(trace.shown ?? []), createdAt: t } });
      if (corrected) {
        await db.correction.create({
          data: { workspaceId: ws.id, conversationId: conv.id, replyMessageId: r.id, reactorId: people.Bo, status: trace?.correction ?? "learned", createdAt: new Date(t.getTime() + 3_600_000) },
        });
      }
    }
  }
  // Not replies: a failed answer and a post of cairn's own this week, and an answer at the slot itself (next week's).
  await reply(at(end, 1), "failed");
  await say("assistant", at(end, 1));
  const next = await reply(end);
  await db.correction.create({ data: { workspaceId: ws.id, conversationId: conv.id, replyMessageId: next.id, reactorId: people.Bo, createdAt: end } });

  // This week's other turns, each in a conversation of its own; the apology is stored as the real turn stores it.
  const turnReplies: (number | null)[] = [];
  for (const [i, turn] of (spec.turns ?? []).entries()) {
    const person = people[turn.who];
    const dm = turn.where === "dm";
    const c = await db.conversation.create({
      data: { workspaceId: ws.id, key: `${spec.platform}:${spec.externalId}:${dm ? `D-${turn.who}` : `${spec.channel}:t${i}`}`, channelId: dm ? `D-${turn.who}` : spec.channel, threadId: dm ? null : `t${i}`, isDm: dm, ownerId: dm ? person : null, createdAt: at(end, turn.days) },
    });
    const q = await db.message.create({ data: { workspaceId: ws.id, conversationId: c.id, role: "user", text: turn.question, status: turn.reply === "none" ? "received" : "failed", authorId: person, createdAt: at(end, turn.days) } });
    const text = turn.reply === "model" ? MODEL_UNAVAILABLE_REPLY : INTERNAL_ERROR_REPLY;
    const r = turn.reply === "none" ? null : await db.message.create({ data: { workspaceId: ws.id, conversationId: c.id, role: "assistant", text, status: "failed", replyToId: q.id, createdAt: new Date(at(end, turn.days).getTime() + 30_000) } });
    turnReplies.push(r?.id ?? null);
  }

  for (const e of spec.entries) {
    const lastRev = e.revs?.at(-1)?.[1];
    let replyMessageId = 0;
    if (e.asked && "reply" in e.asked) {
      const r = thisWeek[e.asked.reply]!;
      await db.message.update({ where: { id: r.question }, data: { text: e.asked.text } });
      replyMessageId = r.reply;
    } else if (e.asked) replyMessageId = turnReplies[e.asked.turn] ?? 0;
    const lessonCase = e.fromCorrection
      ? JSON.stringify({ question: "q", wrongAnswer: "w", correction: e.text, by: { id: people[e.by], name: e.by }, at: at(end, e.created).toISOString(), conversationId: conv.id, channel: spec.channel, isDm: e.scope === "user", replyMessageId, correctionMessageId: 2, link: null })
      : null;
    await db.memoryEntry.create({
      data: {
        id: e.id,
        workspaceId: ws.id,
        scope: e.scope,
        kind: e.kind,
        text: e.text,
        status: e.status,
        ownerId: e.scope === "user" ? people[e.by] : null,
        channelKey: e.scope === "channel" ? spec.channel : null,
        source: e.fromCorrection ? "reaction" : "tool",
        createdById: people[e.by],
        origin: lessonCase,
        createdAt: at(end, e.created),
        updatedAt: at(end, lastRev ?? e.created),
      },
    });
    const [action, actor] = e.first ?? ["add", e.by];
    const revs: [string, number, Name][] = [[action, e.created, actor], ...(e.revs ?? [])];
    for (const [a, d, who] of revs) {
      await db.revision.create({ data: { workspaceId: ws.id, entityType: "memory", entityId: e.id, action: a, actorId: people[who], source: "reaction", newText: e.text, createdAt: at(end, d) } });
    }
  }
  for (const s of spec.skills) {
    const skill = await db.skill.create({
      data: { workspaceId: ws.id, name: s.name, description: `Use for ${s.name}`, content: `---\nname: ${s.name}\n---\n`, contentHash: s.name, source: "tool", useCount: s.useCount, status: s.status ?? "active", createdAt: at(end, s.created) },
    });
    for (const [a, d] of s.revs ?? []) {
      await db.revision.create({ data: { workspaceId: ws.id, entityType: "skill", entityId: skill.id, action: a, source: "tool", createdAt: at(end, d) } });
    }
  }
  return { workspaceId: ws.id, people };
}

// ---------------------------------------------------------------------------------------------
// The figures, from the spec
// ---------------------------------------------------------------------------------------------

/** Days before the slot inside this week. */
const thisWeek = (d: number | null | undefined) => d !== null && d !== undefined && d > 0 && d <= 7;
/** In force at the instant `k` days before the slot. */
const inForceAt = (e: EntrySpec, k: number) => e.inForce[0] !== null && e.inForce[0] > k && (e.inForce[1] === null || e.inForce[1] <= k);
const revsOf = (e: EntrySpec) => [[...(e.first ?? ["add", e.by]), e.created] as const, ...(e.revs ?? []).map(([a, d, w]) => [a, w, d] as const)];
const has = (e: EntrySpec, action: string, inWeek = false) => revsOf(e).some(([a, , d]) => a === action && (!inWeek || thisWeek(d)));
const rate = (c: number, r: number) => (r === 0 ? null : Math.round((c / r) * 1000) / 10);

export function expectedFigures(spec: TeamSpec) {
  const turns = spec.turns ?? [];
  const weeks = [7, 6, 5, 4, 3, 2, 1, 0].map((w) => ({ replies: spec.replies[w] ?? 0, corrections: spec.corrections[w] ?? 0, per100: rate(spec.corrections[w] ?? 0, spec.replies[w] ?? 0) }));
  const team = (e: EntrySpec) => e.scope === "team" && e.kind === "rule";
  const growth = (scope: string) => ({ start: spec.entries.filter((e) => e.scope === scope && inForceAt(e, 7)).length, end: spec.entries.filter((e) => e.scope === scope && inForceAt(e, 0)).length });
  const reads = new Map<string, number>();
  for (const t of spec.traces.filter((x) => x.week === 0 && x.index < spec.replies[0]!)) for (const s of new Set(t.skills ?? [])) reads.set(s, (reads.get(s) ?? 0) + 1);
  const never = spec.skills.filter((s) => (s.status ?? "active") === "active" && s.useCount === 0 && s.created > 7).sort((a, b) => b.created - a.created);
  return {
    weeks,
    correctionsLearned: Array.from({ length: spec.corrections[0] ?? 0 }, (_, i) => i).filter((i) => (spec.traces.find((t) => t.week === 0 && t.index === i)?.correction ?? "learned") === "learned").length,
    lessons: {
      proposed: spec.entries.filter((e) => thisWeek(e.created) && ((e.kind === "lesson" && e.scope === "channel") || (e.kind === "rule" && has(e, "propose")))).length,
      approved: spec.entries.filter((e) => has(e, "approval") && (has(e, "promote", true) || has(e, "approve", true))).length,
      promoted: spec.entries.filter((e) => e.kind === "lesson" && has(e, "promote", true)).length,
      private: spec.entries.filter((e) => thisWeek(e.created) && e.kind === "lesson" && e.scope === "user").length,
    },
    rules: {
      added: spec.entries.filter((e) => team(e) && thisWeek(e.inForce[0])).length,
      archived: spec.entries.filter((e) => team(e) && thisWeek(e.inForce[1])).length,
      active: spec.entries.filter((e) => team(e) && inForceAt(e, 0)).length,
    },
    skills: {
      created: spec.skills.filter((s) => thisWeek(s.created)).length,
      patched: spec.skills.filter((s) => (s.revs ?? []).some(([a, d]) => ["patch", "edit", "write_file", "remove_file"].includes(a) && thisWeek(d))).length,
      mostUsed: [...reads].map(([name, n]) => ({ name, reads: n })).sort((a, b) => b.reads - a.reads || a.name.localeCompare(b.name)).slice(0, 3),
      neverUsed: never.map((s) => s.name).slice(0, 5),
      neverUsedCount: never.length,
    },
    memory: { user: growth("user"), channel: growth("channel"), team: growth("team") },
    /**
     * Who used cairn: Ana asks every seeded question (and the failed one), each turn's person theirs;
     * the team's channel and one conversation per turn; the seed's failed reply and each turn's.
     */
    usage: {
      people: new Set<Name>(["Ana", ...turns.map((t) => t.who)]).size,
      conversations: 1 + turns.length,
      answered: spec.replies[0] ?? 0,
      unanswered: 1 + turns.filter((t) => t.reply !== "none").length,
      modelFailures: turns.filter((t) => t.reply === "model").length,
      tokens: null,
    },
    /** Team entries that came into force this week and still are, oldest first. */
    learned: spec.entries.filter((e) => e.scope === "team" && thisWeek(e.inForce[0]) && inForceAt(e, 0)).sort((a, b) => b.inForce[0]! - a.inForce[0]!),
  };
}
