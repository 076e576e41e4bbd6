/**
 * LoCoMo reader (format: ../shared/bench/README.md). The data is CC BY-NC and stays outside the
 * repository: it is read from LOCOMO_PATH or ../shared/bench/locomo/locomo-dev.json.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/ground/paths.ts";
import { z } from "zod";

export const DEFAULT_LOCOMO_PATH = join(PROJECT_ROOT, "..", "shared", "bench", "locomo", "locomo-dev.json");

export const CATEGORY_NAMES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

export interface Turn {
  diaId: string;
  session: number;
  speaker: string;
  text: string;
  /** Session date plus 30 s per turn, so turns keep their order in time. */
  at: Date;
  /** The session's date as written ("1:56 pm on 8 May, 2023"). */
  dateText: string;
}

export interface Question {
  question: string;
  category: number;
  /** Indexes into the conversation's turns. */
  evidence: number[];
}

export interface Conversation {
  id: string;
  speakers: string[];
  turns: Turn[];
  questions: Question[];
}

export interface LoCoMo {
  path: string;
  conversations: Conversation[];
  /** Evidence ids that could not be matched to a turn (malformed or pointing nowhere). */
  skippedEvidence: number;
  /** Questions of categories 1-4 left out because none of their evidence could be matched. */
  skippedQuestions: number;
}

const TurnSchema = z.looseObject({ speaker: z.string(), dia_id: z.string(), text: z.string() });
const QaSchema = z.looseObject({ question: z.string(), category: z.number(), evidence: z.array(z.string()).optional() });
const SampleSchema = z.looseObject({ sample_id: z.string(), conversation: z.record(z.string(), z.unknown()), qa: z.array(QaSchema) });

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** "1:56 pm on 8 May, 2023" as UTC (the data has no time zone). */
export function parseSessionDate(s: string): Date {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(s);
  if (!m) throw new Error(`unreadable session date: ${s}`);
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") hour += 12;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) throw new Error(`unreadable month in: ${s}`);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

export function loadLoCoMo(path = process.env.LOCOMO_PATH ?? DEFAULT_LOCOMO_PATH): LoCoMo | null {
  if (!existsSync(path)) return null;
  const raw = z.array(SampleSchema).parse(JSON.parse(readFileSync(path, "utf8")));
  let skippedEvidence = 0;
  let skippedQuestions = 0;
  const conversations = raw.map((sample): Conversation => {
    const c = sample.conversation;
    const sessions = Object.keys(c)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns: Turn[] = [];
    const byDia = new Map<string, number>();
    for (const s of sessions) {
      const dateText = String(c[`session_${s}_date_time`] ?? "");
      const start = parseSessionDate(dateText);
      z.array(TurnSchema)
        .parse(c[`session_${s}`])
        .forEach((t, i) => {
          byDia.set(t.dia_id, turns.length);
          turns.push({ diaId: t.dia_id, session: s, speaker: t.speaker, text: t.text, at: new Date(start.getTime() + i * 30_000), dateText });
        });
    }
    const questions: Question[] = [];
    for (const qa of sample.qa) {
      if (qa.category < 1 || qa.category > 4) continue;
      const ids = (qa.evidence ?? []).flatMap((e) => e.split(/[;\s]+/)).filter(Boolean);
      const evidence = new Set<number>();
      for (const id of ids) {
        // Normalise "D:11:26" and "D30:05" to "D11:26" and "D30:5".
        const m = /^D:?(\d+):0*(\d+)$/.exec(id);
        const idx = m ? byDia.get(`D${Number(m[1])}:${Number(m[2])}`) : undefined;
        if (idx === undefined) skippedEvidence++;
        else evidence.add(idx);
      }
      if (evidence.size === 0) skippedQuestions++;
      else questions.push({ question: qa.question, category: qa.category, evidence: [...evidence] });
    }
    const speakers = [String(c.speaker_a ?? ""), String(c.speaker_b ?? "")].filter(Boolean);
    return { id: sample.sample_id, speakers, turns, questions };
  });
  return { path, conversations, skippedEvidence, skippedQuestions };
}
