/**
 * The latest weekly report's numbers as a few lines for the views (the Home tab's "This week").
 * The numbers are the ones the report stored (counted from the database when it was made); the
 * stored JSON is read back through a schema, and a report whose data does not parse shows its date.
 */
import { z } from "zod";
import type { Report } from "../report/report-store.ts";
import { sparkline } from "../report/render.ts";

const Counts = z.looseObject({
  periodStart: z.string(),
  periodEnd: z.string(),
  weeks: z.array(z.looseObject({ replies: z.number(), corrections: z.number(), per100: z.number().nullable() })).min(1),
  lessons: z.looseObject({ proposed: z.number(), approved: z.number(), promoted: z.number() }),
  rules: z.looseObject({ added: z.number(), archived: z.number(), active: z.number() }),
  skills: z.looseObject({ created: z.number(), patched: z.number() }),
});
const Stored = z.looseObject({ metrics: Counts });

export function weekLines(report: Pick<Report, "data" | "periodStart" | "periodEnd"> | null): string[] {
  if (!report) return ["No weekly report yet: the first one is made at the next scheduled run."];
  const span = `${report.periodStart.toISOString().slice(0, 10)} to ${report.periodEnd.toISOString().slice(0, 10)}`;
  let data: unknown;
  try {
    data = JSON.parse(report.data);
  } catch {
    data = null;
  }
  const parsed = Stored.safeParse(data);
  if (!parsed.success) return [`Week of ${span}: \`/cairn report\` shows the report.`];
  const m = parsed.data.metrics;
  const w = m.weeks.at(-1)!;
  const rate = w.per100 === null ? "no replies" : `${w.per100} per 100 replies`;
  return [
    `Week of ${span}`,
    `Replies: **${w.replies}** · corrections: **${w.corrections}** (${rate})`,
    `Corrections per 100 replies, last ${m.weeks.length} weeks: \`${sparkline(m.weeks.map((x) => x.per100))}\``,
    `Lessons: ${m.lessons.proposed} proposed, ${m.lessons.approved} approved, ${m.lessons.promoted} promoted · team rules: ${m.rules.added} added, ${m.rules.archived} archived, ${m.rules.active} in force`,
    `Skills: ${m.skills.created} created, ${m.skills.patched} patched · \`/cairn report\` shows the whole review`,
  ];
}
