/**
 * The weekly review's layout: a title and sections, written here from the metrics alone (the
 * numbers) and the model's checked sentences (when there are any), which go around the numbers,
 * never into them. Two forms come from the one layout: the Markdown message (stored, shown by
 * `/cairn report`, rendered by each adapter: Slack mrkdwn, Discord Markdown, the terminal) and the
 * rich post (Slack blocks, a Discord embed) for platforms that have one.
 */
import type { RichPost } from "../ground/adapter.ts";
import type { ViewButton } from "../ground/view-model.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { LEARNED_MAX, type LearnedItem } from "./learned.ts";
import type { ReportMetrics, ScopeGrowth, WeekFigures } from "./metrics.ts";
import type { Narrative, RuleInfo } from "./narrative.ts";
import type { Praised, PraisedCount } from "./praise.ts";
import type { RepeatedProblems } from "./topics.ts";

export const SPARKS = "▁▂▃▄▅▆▇█";

/** One block per value, scaled from zero to the largest; "·" for a week with no value. */
export function sparkline(values: readonly (number | null)[]): string {
  const max = Math.max(0, ...values.filter((v): v is number => v !== null));
  return values.map((v) => (v === null ? "·" : max === 0 ? SPARKS[0] : SPARKS[Math.round((v / max) * (SPARKS.length - 1))])).join("");
}

export interface ReportView {
  workspaceName: string | null;
  metrics: ReportMetrics;
  repeated: RepeatedProblems;
  praised: Praised;
  learned: readonly LearnedItem[];
  rules: readonly RuleInfo[];
  narrative: Narrative | null;
  /** What closes the loop (loop.ts): the curator's changes, facts that changed, what is due, what waits. */
  loop?: readonly ReportSection[];
}

const QUOTE = 140;
const q = (text: string) => `"${excerpt(text, QUOTE)}"`;
const rate = (v: number | null) => (v === null ? "n/a" : v.toFixed(1));
const signed = (n: number) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");
const growth = (label: string, g: ScopeGrowth) => `${label} ${g.start} → ${g.end} (${signed(g.end - g.start)})`;
const day = (iso: string) => iso.slice(0, 10);

/** "(from the first week with replies to this week)", when both have a rate. */
function span(rates: readonly (number | null)[]): string {
  const first = rates.find((r) => r !== null);
  const last = rates.at(-1);
  return first !== undefined && first !== null && last !== undefined && last !== null ? ` (${rate(first)} → ${rate(last)})` : "";
}

function arrow(now: number | null, before: number | null): string {
  if (now === null || before === null || now === before) return "";
  return now < before ? " ↓" : " ↑";
}

/** One section: a heading (bold in Markdown), a remark after it, and its Markdown lines. */
export interface ReportSection {
  heading: string;
  aside?: string;
  lines: string[];
  /** Commands the lines list typed, as buttons in the rich post (a click runs them as the clicker). */
  buttons?: readonly ViewButton[];
}

export interface ReportLayout {
  /** Plain text; `lead` is bold in Markdown. */
  title: { lead: string; rest: string };
  /** The model's opening sentences, when they passed the checks. */
  narrative: string | null;
  sections: ReportSection[];
}

/** Under the rich post only (the Markdown text stays as stored): where the numbers come from, how to see it again. */
export const REPORT_FOOTER = "Numbers are counted from cairn's records, not written by the model · /cairn report shows the latest review again";

function numbers(m: ReportMetrics): ReportSection {
  const [thisWeek, lastWeek] = [m.weeks.at(-1)!, m.weeks.at(-2)!] as [WeekFigures, WeekFigures];
  const s = m.skills;
  const rates = m.weeks.map((w) => w.per100);
  const used = s.mostUsed.length ? ` · most used: ${s.mostUsed.map((u) => `\`${u.name}\` (${u.reads})`).join(", ")}` : "";
  const more = s.neverUsedCount > s.neverUsed.length ? ` (+${s.neverUsedCount - s.neverUsed.length} more)` : "";
  const unused = s.neverUsedCount ? ` · never used: ${s.neverUsed.map((n) => `\`${n}\``).join(", ")}${more}` : "";
  return {
    heading: "This week in numbers",
    lines: [
      `- Replies: **${thisWeek.replies}** (last week ${lastWeek.replies}) · 8 weeks ${sparkline(m.weeks.map((w) => w.replies))}`,
      `- Corrections: **${thisWeek.corrections}**, ${rate(thisWeek.per100)} per 100 replies${arrow(thisWeek.per100, lastWeek.per100)} (last week ${lastWeek.corrections}, ${rate(lastWeek.per100)}) · ${m.correctionsLearned} became lessons`,
      `- Corrections per 100 replies, 8 weeks: ${sparkline(rates)}${span(rates)}`,
      `- Lessons: ${m.lessons.proposed} proposed · ${m.lessons.approved} approved · ${m.lessons.promoted} promoted to team rules · ${m.lessons.private} private (DMs)`,
      `- Team rules: ${m.rules.added} added · ${m.rules.archived} archived · ${m.rules.active} in force`,
      `- Skills: ${s.created} created · ${s.patched} patched${used}${unused}`,
      `- Memory in force, start → end of week: ${growth("team", m.memory.team)} · ${growth("channels", m.memory.channel)} · ${growth("personal", m.memory.user)}`,
    ],
  };
}

function repeated(r: RepeatedProblems): ReportSection | null {
  if (r.byWords.length === 0 && r.byRule.length === 0) return null;
  const lines: string[] = [];
  for (const t of r.byWords) {
    const who = t.people.length ? ` (${t.people.join(", ")})` : "";
    lines.push(`- ${t.words.length ? t.words.join(", ") : "one topic"}: ${t.lessons} corrections${who}`);
  }
  // The rule is doubtful now: an admin keeps it, rewords it or archives it.
  for (const t of r.byRule) lines.push(`- Team rule ${q(t.text)} was in front of ${t.corrections} corrected answers: admins can \`keep ${t.ruleId}\`, \`reword ${t.ruleId} <text>\` or \`forget ${t.ruleId}\``);
  return { heading: "Repeated problems", lines };
}

const answers = (n: number) => `${n} answer${n === 1 ? "" : "s"}`;
const praisedCount = (c: PraisedCount) => `${answers(c.replies)}, praised ${c.praise} time${c.praise === 1 ? "" : "s"}`;

/** What people liked this week: none of it when nothing was praised. */
function praised(p: Praised): ReportSection | null {
  if (p.replies === 0) return null;
  const lines = [`- ${praisedCount(p)}`];
  for (const t of p.topics) lines.push(`- On ${t.words.length ? t.words.join(", ") : "other questions"}: ${praisedCount(t)}`);
  if (p.skills.length) lines.push(`- Skills they read: ${p.skills.map((s) => `\`${s.name}\` (${praisedCount(s)})`).join(", ")}`);
  return { heading: "Most praised answers", aside: "(👍 and other praise this week, DMs left out)", lines };
}

function learned(items: readonly LearnedItem[], n: Narrative | null): ReportSection {
  const heading = "What cairn learned this week";
  if (items.length === 0) return { heading, lines: ["- Nothing new for the whole team this week."] };
  const lines: string[] = [];
  for (const item of items.slice(0, LEARNED_MAX)) {
    const who = [item.taughtBy ? `taught by ${item.taughtBy}` : null, item.approvedBy ? `approved by ${item.approvedBy}` : null].filter(Boolean).join(", ");
    const kind = item.kind === "rule" ? "rule" : item.kind === "lesson" ? "lesson" : "fact";
    lines.push(`- ${n?.summaries[item.id] ?? excerpt(item.text, 240)} _(${kind}${who ? `, ${who}` : ""})_`);
  }
  if (items.length > LEARNED_MAX) lines.push(`- …and ${items.length - LEARNED_MAX} more (\`/cairn lessons\` lists them)`);
  return { heading, lines };
}

function proposals(n: Narrative | null, rules: readonly RuleInfo[]): ReportSection | null {
  if (!n || n.proposals.length === 0) return null;
  const text = (id: string) => q(rules.find((r) => r.id === id)?.text ?? id);
  return {
    heading: "Proposals",
    aside: "(cairn's suggestions; a person decides)",
    lines: n.proposals.map((p) =>
      p.kind === "prune"
        ? `- Prune ${text(p.ruleIds[0]!)} (\`${p.ruleIds[0]}\`): ${p.reason}`
        : `- Resolve ${text(p.ruleIds[0]!)} vs ${text(p.ruleIds[1]!)}: ${p.reason}`,
    ),
  };
}

export function reportLayout(v: ReportView): ReportLayout {
  const m = v.metrics;
  const title = { lead: "cairn's weekly self-review", rest: `${v.workspaceName ? ` for ${v.workspaceName}` : ""}, ${day(m.periodStart)} to ${day(m.periodEnd)}` };
  const sections = [numbers(m), repeated(v.repeated), praised(v.praised), learned(v.learned, v.narrative), ...(v.loop ?? []), proposals(v.narrative, v.rules)];
  return { title, narrative: v.narrative?.narrative || null, sections: sections.filter((s): s is ReportSection => s !== null) };
}

/** The report as one Markdown message: what is stored, shown by `/cairn report`, and posted where no rich form is. */
export function reportMarkdown(l: ReportLayout): string {
  const opening = [`**${l.title.lead}**${l.title.rest}`, ...(l.narrative ? [l.narrative] : [])].join("\n");
  const sections = l.sections.map((s) => [`**${s.heading}**${s.aside ? ` ${s.aside}` : ""}`, ...s.lines].join("\n"));
  return [opening, ...sections].join("\n\n");
}

/** The same report as a rich post: the title as a header, the narrative first, a footer. */
export function reportRich(l: ReportLayout): RichPost {
  return {
    title: `${l.title.lead}${l.title.rest}`,
    sections: [
      ...(l.narrative ? [{ markdown: l.narrative }] : []),
      ...l.sections.map((s) => ({ heading: s.aside ? `${s.heading} ${s.aside}` : s.heading, markdown: s.lines.join("\n"), ...(s.buttons?.length ? { buttons: s.buttons } : {}) })),
    ],
    footer: REPORT_FOOTER,
  };
}
