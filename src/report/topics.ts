/**
 * Repeated problems: this week's corrections on the same topic.
 * - By question: this week's channel lessons (a learned correction each) whose texts share
 *   distinctive words (distill.ts `overlap`, ALWAYS/NEVER left out) are one topic; a topic of two or
 *   more is a repeated problem, named by a question people asked (the one most like the others,
 *   the latest among equals). Questions come from channel conversations only; private (DM) lessons
 *   are never read here, and a DM's question is never quoted.
 * - By rule: corrected answers of this week whose prompt held the same team rule (the reply
 *   trace's rules and lessons shown): the rule did not prevent the mistake, or caused it.
 */
import type { WorkspaceScope } from "../ground/scope.ts";
import { overlap } from "../learning/distill.ts";
import { parseCase } from "../lessons/lesson-case.ts";
import { STOP_WORDS, tokenize } from "../history/text.ts";
import { within } from "./lifetime.ts";
import type { HistoryEntry } from "./memory-history.ts";
import type { Period } from "./metrics.ts";
import type { ReportStore } from "./report-store.ts";
import { excerpt } from "../lessons/lesson-case.ts";

/** Lessons at least this alike (cosine of their distinctive words) are on the same topic. */
export const SAME_TOPIC = 0.3;
const TOPIC_WORDS = 3;
const RULE_WORDS = new Set(["always", "never"]);

/** How long a quoted question may be. */
export const QUESTION_CHARS = 80;

export interface WordTopic {
  /** A question people asked on the topic, cut to QUESTION_CHARS; null when none can be shown. */
  question: string | null;
  /** Words the topic's lessons share, most shared first (for the model; the report quotes the question). */
  words: string[];
  lessons: number;
  /** Who made the corrections (the lesson cases' `by.name`), distinct, in order. */
  people: string[];
}

export interface RuleTopic {
  ruleId: string;
  text: string;
  /** Corrections of this week whose corrected answer showed the rule. */
  corrections: number;
}

export interface RepeatedProblems {
  byWords: WordTopic[];
  byRule: RuleTopic[];
}

const bare = (text: string) => text.replace(/^\s*(ALWAYS|NEVER)\b/i, "");

/** Groups texts by single-link overlap ≥ SAME_TOPIC; returns index groups of `min` or more (two: a repeat). */
export function groupByWords(texts: readonly string[], min = 2): number[][] {
  const parent = texts.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      if (overlap(bare(texts[i]!), bare(texts[j]!)) >= SAME_TOPIC) parent[find(j)] = find(i);
    }
  }
  const groups = new Map<number, number[]>();
  texts.forEach((_, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), i]));
  return [...groups.values()].filter((g) => g.length >= min);
}

/** The words most of a group's texts share (as first written), for a topic's label; a group of one is labelled by its own words. */
export function sharedWords(texts: readonly string[]): string[] {
  const least = Math.min(2, texts.length);
  // Insertion order is first appearance: the sort below keeps it among equals.
  const counts = new Map<string, { word: string; n: number }>();
  for (const text of texts) {
    const seen = new Set<string>();
    for (const tok of tokenize(text)) {
      if (STOP_WORDS.has(tok.word) || RULE_WORDS.has(tok.word) || /^\d+$/.test(tok.word) || seen.has(tok.key)) continue;
      seen.add(tok.key);
      const c = counts.get(tok.key);
      if (c) c.n++;
      else counts.set(tok.key, { word: tok.word, n: 1 });
    }
  }
  return [...counts.values()]
    .filter((c) => c.n >= least)
    .sort((a, b) => b.n - a.n)
    .slice(0, TOPIC_WORDS)
    .map((c) => c.word);
}

/** The text most like the others (summed overlap), the latest among equals; null for none. */
export function representative<T extends { text: string; at: Date }>(items: readonly T[]): T | null {
  let best: { item: T; score: number } | null = null;
  for (const item of items) {
    const score = items.reduce((n, other) => (other === item ? n : n + overlap(item.text, other.text)), 0);
    if (!best || score > best.score || (score === best.score && item.at > best.item.at)) best = { item, score };
  }
  return best?.item ?? null;
}

export async function repeatedProblems(reports: ReportStore, scope: WorkspaceScope, entries: readonly HistoryEntry[], p: Period): Promise<RepeatedProblems> {
  const lessons = entries.filter((e) => e.kind === "lesson" && e.scope === "channel" && within(e.createdAt, p.start, p.end));
  const groups = groupByWords(lessons.map((l) => l.text)).map((group) => group.map((i) => lessons[i]!));
  // The corrected replies' questions, read from the messages: an erased one is gone, a DM's never read.
  const replyIds = groups.flatMap((members) => members.flatMap((m) => parseCase(m.origin)?.replyMessageId ?? []));
  const asked = new Map((await reports.questionsAnswered(scope, replyIds)).map((q) => [q.replyId, q]));
  const byWords = groups.map((members): WordTopic => {
    const people = [...new Set(members.map((m) => parseCase(m.origin)?.by.name).filter((n): n is string => !!n))];
    const questions = members.flatMap((m) => asked.get(parseCase(m.origin)?.replyMessageId ?? -1) ?? []);
    const question = representative(questions);
    return { question: question ? excerpt(question.text, QUESTION_CHARS) : null, words: sharedWords(members.map((m) => m.text)), lessons: members.length, people };
  });
  const traces = await reports.correctedShown(scope, p);
  const rules = new Map(entries.filter((e) => e.kind === "rule" && e.scope === "team").map((e) => [e.id, e]));
  const shown = new Map<string, number>();
  for (const t of traces) for (const id of new Set(t)) if (rules.has(id)) shown.set(id, (shown.get(id) ?? 0) + 1);
  const byRule = [...shown]
    .filter(([, n]) => n >= 2)
    .map(([ruleId, n]) => ({ ruleId, text: rules.get(ruleId)!.text, corrections: n }))
    .sort((a, b) => b.corrections - a.corrections || a.ruleId.localeCompare(b.ruleId));
  return { byWords: byWords.sort((a, b) => b.lessons - a.lessons), byRule };
}
