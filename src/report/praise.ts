/**
 * The week's most praised answers: what they were about and which skills they read. Praise is a
 * positive reaction or feedback button still on an answer (ReplyTrace.positive). Topics are the
 * answered questions grouped as repeated problems group lessons (topics.ts), each named by one of
 * its questions (topics.ts `representative`); a lone question is a topic of its own. Only what anyone in the workspace may see: no DM's answers, and of the skills
 * read only team and bundled ones (a person's or a channel's skill is not named).
 */
import type { WorkspaceScope } from "../ground/scope.ts";
import type { Period } from "./metrics.ts";
import type { ReportStore } from "./report-store.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { groupByWords, QUESTION_CHARS, representative } from "./topics.ts";

/** Topics and skills listed, the most praised first. */
export const PRAISED_MAX = 3;

export interface PraisedCount {
  /** Praised answers. */
  replies: number;
  /** Praise on them (one answer can be praised by several people). */
  praise: number;
}

export interface PraisedTopic extends PraisedCount {
  /** One of the topic's questions (the most like the others), cut to QUESTION_CHARS. */
  question: string;
}

export interface PraisedSkill extends PraisedCount {
  name: string;
}

export interface Praised extends PraisedCount {
  topics: PraisedTopic[];
  skills: PraisedSkill[];
}

const most = <T extends PraisedCount>(items: T[], key: (t: T) => string): T[] =>
  items.sort((a, b) => b.praise - a.praise || b.replies - a.replies || key(a).localeCompare(key(b))).slice(0, PRAISED_MAX);

export async function praisedThisWeek(reports: ReportStore, scope: WorkspaceScope, p: Period): Promise<Praised> {
  const replies = await reports.praised(scope, p);
  const questions = replies.map((r) => r.question);
  const topics = groupByWords(questions, 1).map((group) => {
    const members = group.map((i) => replies[i]!);
    const named = representative(members.map((m) => ({ text: m.question, at: m.at })))!;
    return { question: excerpt(named.text, QUESTION_CHARS), replies: members.length, praise: members.reduce((n, m) => n + m.praise, 0) };
  });
  const shown = await reports.teamSkills(scope, [...new Set(replies.flatMap((r) => r.skills))]);
  const skills = new Map<string, PraisedSkill>();
  for (const r of replies) {
    for (const name of new Set(r.skills)) {
      if (!shown.has(name)) continue;
      const s = skills.get(name) ?? { name, replies: 0, praise: 0 };
      skills.set(name, { name, replies: s.replies + 1, praise: s.praise + r.praise });
    }
  }
  return {
    replies: replies.length,
    praise: replies.reduce((n, r) => n + r.praise, 0),
    topics: most(topics, (t) => t.question),
    skills: most([...skills.values()], (s) => s.name),
  };
}
