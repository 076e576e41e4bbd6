/**
 * The case a lesson came from, kept beside the rule: the question, the wrong answer, the correction
 * in the person's own words, who, when and where. Stored as JSON in MemoryEntry.origin and read
 * back through this schema (a row written by an older version parses or is treated as absent).
 */
import { z } from "zod";

export const LessonCaseSchema = z.object({
  question: z.string().nullable(),
  wrongAnswer: z.string(),
  correction: z.string(),
  by: z.object({ id: z.string(), name: z.string() }),
  at: z.string(),
  conversationId: z.string(),
  channel: z.string(),
  isDm: z.boolean(),
  replyMessageId: z.number().int(),
  correctionMessageId: z.number().int(),
  /** The correction's permalink, as its platform's adapter gave it (Inbound.link); null where there is none. */
  link: z.string().nullable(),
  /** For a rule waiting for approval: the lessons it will archive once approved. */
  fromLessons: z.array(z.string()).optional(),
});

export type LessonCase = z.infer<typeof LessonCaseSchema>;

export function parseCase(origin: string | null): LessonCase | null {
  if (!origin) return null;
  try {
    const parsed = LessonCaseSchema.safeParse(JSON.parse(origin));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Long texts in a case are cut: the case is evidence, not an archive (history keeps the rest). */
export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The short quote shown beside a rule wherever the model sees it. */
export const QUOTE_CHARS = 160;
