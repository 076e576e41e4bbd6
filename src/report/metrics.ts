/**
 * The weekly report's numbers, all from the database (never from the model), for one
 * workspace and the week [end - 7 days, end), where end is the schedule slot. docs/report.md
 * defines each; the comments below say which rows and revisions they count.
 */
import { z } from "zod";
import type { WorkspaceScope } from "../ground/scope.ts";
import { activeAt, within } from "./lifetime.ts";
import { hasRevision, type HistoryEntry } from "./memory-history.ts";
import type { ReportStore } from "./report-store.ts";

export const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
export const TREND_WEEKS = 8;
const MOST_USED = 3;
const NEVER_USED = 5;

export interface Period {
  start: Date;
  end: Date;
}

export function periodEnding(end: Date, weeksBack = 0): Period {
  const e = new Date(end.getTime() - weeksBack * WEEK_MS);
  return { start: new Date(e.getTime() - WEEK_MS), end: e };
}

export interface WeekFigures {
  start: string;
  replies: number;
  corrections: number;
  /** Corrections per 100 replies, one decimal; null for a week without replies. */
  per100: number | null;
}

export interface ScopeGrowth {
  start: number;
  end: number;
}

export interface ReportMetrics {
  periodStart: string;
  periodEnd: string;
  /** The last TREND_WEEKS weeks, oldest first: the last one is this week, the one before it last week. */
  weeks: WeekFigures[];
  /** Corrections of this week that became a lesson. */
  correctionsLearned: number;
  lessons: { proposed: number; approved: number; promoted: number; private: number };
  rules: { added: number; archived: number; active: number };
  skills: { created: number; patched: number; mostUsed: { name: string; reads: number }[]; neverUsed: string[]; neverUsedCount: number };
  memory: { user: ScopeGrowth; channel: ScopeGrowth; team: ScopeGrowth };
}

export const per100 = (corrections: number, replies: number): number | null => (replies > 0 ? Math.round((corrections * 1000) / replies) / 10 : null);

/**
 * Replies: cairn's answers to a person's message (role assistant, status sent, replyToId set).
 * Corrections: a 👎 on an answer that cairn asked about, or a correction typed in words (record_correction): one Correction row per answer, any status.
 */
async function weekFigures(reports: ReportStore, scope: WorkspaceScope, p: Period): Promise<WeekFigures> {
  const { replies, corrections } = await reports.week(scope, p);
  return { start: p.start.toISOString(), replies, corrections, per100: per100(corrections, replies) };
}

export async function trend(reports: ReportStore, scope: WorkspaceScope, end: Date): Promise<WeekFigures[]> {
  const weeks = Array.from({ length: TREND_WEEKS }, (_, i) => periodEnding(end, TREND_WEEKS - 1 - i));
  return Promise.all(weeks.map((p) => weekFigures(reports, scope, p)));
}

export function lessonFigures(entries: readonly HistoryEntry[], p: Period): ReportMetrics["lessons"] {
  const created = (e: HistoryEntry) => within(e.createdAt, p.start, p.end);
  return {
    // Proposals for a team rule posted this week: channel lessons (each is posted asking for ✅)
    // and rules held pending because they would replace another (a "propose" revision).
    proposed: entries.filter((e) => created(e) && ((e.kind === "lesson" && e.scope === "channel") || (e.kind === "rule" && hasRevision(e, ["propose"])))).length,
    // Approved: proposals a person's ✅ made a team rule this week ("approval" revision(s), and the
    // lesson's "promote" or the pending rule's "approve" this week).
    approved: entries.filter((e) => hasRevision(e, ["approval"]) && hasRevision(e, ["promote", "approve"], p.start, p.end)).length,
    // Promoted: lessons that became (part of) a team rule this week, by approval or because the
    // same correction was made again ("promote" revision).
    promoted: entries.filter((e) => e.kind === "lesson" && hasRevision(e, ["promote"], p.start, p.end)).length,
    // Private lessons: learned from a correction in a DM (never proposed, never shown to others).
    private: entries.filter((e) => created(e) && e.kind === "lesson" && e.scope === "user").length,
  };
}

/** Team rules that came into force, and left it, this week; in force at its end. */
export function ruleFigures(entries: readonly HistoryEntry[], p: Period): ReportMetrics["rules"] {
  const rules = entries.filter((e) => e.kind === "rule" && e.scope === "team");
  return {
    added: rules.filter((e) => within(e.life.from, p.start, p.end)).length,
    archived: rules.filter((e) => within(e.life.until, p.start, p.end)).length,
    active: rules.filter((e) => activeAt(e.life, p.end)).length,
  };
}

/** Entries of each scope (facts, lessons and rules) in force at the week's start and at its end. */
export function memoryGrowth(entries: readonly HistoryEntry[], p: Period): ReportMetrics["memory"] {
  const growth = (scope: string): ScopeGrowth => {
    const of = entries.filter((e) => e.scope === scope);
    return { start: of.filter((e) => activeAt(e.life, p.start)).length, end: of.filter((e) => activeAt(e.life, p.end)).length };
  };
  return { user: growth("user"), channel: growth("channel"), team: growth("team") };
}

const SkillNames = z.array(z.string());

/**
 * Created: the workspace's own skills created this week. Patched: distinct skills whose content or
 * files changed this week. Most used: reads recorded in this week's reply traces, of team and
 * bundled skills (a person's or a channel's skill is not named to the whole team). Never used:
 * active team skills of the workspace, older than this week, never read.
 */
export async function skillFigures(reports: ReportStore, scope: WorkspaceScope, p: Period): Promise<ReportMetrics["skills"]> {
  const { created, patched, reads: traces, neverUsed: unused } = await reports.skills(scope, p);
  const reads = new Map<string, number>();
  for (const t of traces) {
    let names: string[] = [];
    try {
      names = SkillNames.catch([]).parse(JSON.parse(t));
    } catch {
      names = [];
    }
    for (const name of new Set(names)) reads.set(name, (reads.get(name) ?? 0) + 1);
  }
  const named = await reports.teamSkills(scope, [...reads.keys()]);
  const mostUsed = [...reads]
    .filter(([name]) => named.has(name))
    .map(([name, n]) => ({ name, reads: n }))
    .sort((a, b) => b.reads - a.reads || a.name.localeCompare(b.name))
    .slice(0, MOST_USED);
  return {
    created,
    patched: new Set(patched).size,
    mostUsed,
    neverUsed: unused.slice(0, NEVER_USED),
    neverUsedCount: unused.length,
  };
}

export async function computeMetrics(reports: ReportStore, scope: WorkspaceScope, entries: readonly HistoryEntry[], p: Period): Promise<ReportMetrics> {
  const [weeks, skills, correctionsLearned] = await Promise.all([trend(reports, scope, p.end), skillFigures(reports, scope, p), reports.learnedCorrections(scope, p)]);
  return {
    periodStart: p.start.toISOString(),
    periodEnd: p.end.toISOString(),
    weeks,
    correctionsLearned,
    lessons: lessonFigures(entries, p),
    rules: ruleFigures(entries, p),
    skills,
    memory: memoryGrowth(entries, p),
  };
}
