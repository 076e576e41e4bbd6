/**
 * The weekly review as one Markdown message (each adapter renders it: Slack mrkdwn, Discord
 * Markdown, the terminal). The numbers section is written here, from the metrics alone; the
 * model's sentences (when there are any) go around it, never into it.
 */
import { excerpt } from "../learning/lesson-case.ts";
import { LEARNED_MAX, type LearnedItem } from "./learned.ts";
import type { ReportMetrics, ScopeGrowth, WeekFigures } from "./metrics.ts";
import type { Narrative, RuleInfo } from "./narrative.ts";
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
  learned: readonly LearnedItem[];
  rules: readonly RuleInfo[];
  narrative: Narrative | null;
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

function numbers(m: ReportMetrics): string[] {
  const [thisWeek, lastWeek] = [m.weeks.at(-1)!, m.weeks.at(-2)!] as [WeekFigures, WeekFigures];
  const s = m.skills;
  const rates = m.weeks.map((w) => w.per100);
  const used = s.mostUsed.length ? ` · most used: ${s.mostUsed.map((u) => `\`${u.name}\` (${u.reads})`).join(", ")}` : "";
  const more = s.neverUsedCount > s.neverUsed.length ? ` (+${s.neverUsedCount - s.neverUsed.length} more)` : "";
  const unused = s.neverUsedCount ? ` · never used: ${s.neverUsed.map((n) => `\`${n}\``).join(", ")}${more}` : "";
  return [
    "**This week in numbers**",
    `- Replies: **${thisWeek.replies}** (last week ${lastWeek.replies}) · 8 weeks ${sparkline(m.weeks.map((w) => w.replies))}`,
    `- Corrections: **${thisWeek.corrections}**, ${rate(thisWeek.per100)} per 100 replies${arrow(thisWeek.per100, lastWeek.per100)} (last week ${lastWeek.corrections}, ${rate(lastWeek.per100)}) · ${m.correctionsLearned} became lessons`,
    `- Corrections per 100 replies, 8 weeks: ${sparkline(rates)}${span(rates)}`,
    `- Lessons: ${m.lessons.proposed} proposed · ${m.lessons.approved} approved · ${m.lessons.promoted} promoted to team rules · ${m.lessons.private} private (DMs)`,
    `- Team rules: ${m.rules.added} added · ${m.rules.archived} archived · ${m.rules.active} in force`,
    `- Skills: ${s.created} created · ${s.patched} patched${used}${unused}`,
    `- Memory in force, start → end of week: ${growth("team", m.memory.team)} · ${growth("channels", m.memory.channel)} · ${growth("personal", m.memory.user)}`,
  ];
}

function repeatedLines(r: RepeatedProblems): string[] {
  if (r.byWords.length === 0 && r.byRule.length === 0) return [];
  const lines = ["**Repeated problems**"];
  for (const t of r.byWords) {
    const who = t.people.length ? ` (${t.people.join(", ")})` : "";
    lines.push(`- ${t.words.length ? t.words.join(", ") : "one topic"}: ${t.lessons} corrections${who}`);
  }
  for (const t of r.byRule) lines.push(`- Team rule ${q(t.text)} was in front of ${t.corrections} corrected answers`);
  return lines;
}

function learnedLines(items: readonly LearnedItem[], n: Narrative | null): string[] {
  const lines = ["**What cairn learned this week**"];
  if (items.length === 0) return [...lines, "- Nothing new for the whole team this week."];
  for (const item of items.slice(0, LEARNED_MAX)) {
    const who = [item.taughtBy ? `taught by ${item.taughtBy}` : null, item.approvedBy ? `approved by ${item.approvedBy}` : null].filter(Boolean).join(", ");
    const kind = item.kind === "rule" ? "rule" : item.kind === "lesson" ? "lesson" : "fact";
    lines.push(`- ${n?.summaries[item.id] ?? excerpt(item.text, 240)} _(${kind}${who ? `, ${who}` : ""})_`);
  }
  if (items.length > LEARNED_MAX) lines.push(`- …and ${items.length - LEARNED_MAX} more (\`/cairn lessons\` lists them)`);
  return lines;
}

function proposalLines(n: Narrative | null, rules: readonly RuleInfo[]): string[] {
  if (!n || n.proposals.length === 0) return [];
  const text = (id: string) => q(rules.find((r) => r.id === id)?.text ?? id);
  return [
    "**Proposals** (cairn's suggestions; a person decides)",
    ...n.proposals.map((p) =>
      p.kind === "prune"
        ? `- Prune ${text(p.ruleIds[0]!)} (\`${p.ruleIds[0]}\`): ${p.reason}`
        : `- Resolve ${text(p.ruleIds[0]!)} vs ${text(p.ruleIds[1]!)}: ${p.reason}`,
    ),
  ];
}

export function renderReport(v: ReportView): string {
  const m = v.metrics;
  const title = `**cairn's weekly self-review**${v.workspaceName ? ` for ${v.workspaceName}` : ""}, ${day(m.periodStart)} to ${day(m.periodEnd)}`;
  const sections = [
    [title, ...(v.narrative?.narrative ? [v.narrative.narrative] : [])],
    numbers(m),
    repeatedLines(v.repeated),
    learnedLines(v.learned, v.narrative),
    proposalLines(v.narrative, v.rules),
  ];
  return sections
    .filter((s) => s.length)
    .map((s) => s.join("\n"))
    .join("\n\n");
}
