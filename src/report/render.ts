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
import { estimateCost, type Price, type TokenUse } from "./prices.ts";
import type { ReportUsage } from "./usage.ts";

export const SPARKS = "▁▂▃▄▅▆▇█";

/** One block per value, scaled from zero to the largest; "·" for a week with no value. */
export function sparkline(values: readonly (number | null)[]): string {
  const max = Math.max(0, ...values.filter((v): v is number => v !== null));
  return values.map((v) => (v === null ? "·" : max === 0 ? SPARKS[0] : SPARKS[Math.round((v / max) * (SPARKS.length - 1))])).join("");
}

export interface ReportView {
  workspaceName: string | null;
  metrics: ReportMetrics;
  usage: ReportUsage;
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
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const typed = (...words: string[]) => `\`/cairn ${words.join(" ")}\``;

/** "(from the first week with answers to this week)", when both have a rate. */
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
export const REPORT_FOOTER = "Every number is counted from cairn's records, not written by the AI model · /cairn report shows the latest report again";

const thousands = (n: number) => n.toLocaleString("en-US");

/** Tokens and their estimated cost, where recorded; a model without a listed price shows its tokens only. */
function tokenLine(tokens: readonly TokenUse[], prices: Readonly<Record<string, Price>>): string {
  const sum = (f: (t: TokenUse) => number) => tokens.reduce((n, t) => n + f(t), 0);
  const costs = tokens.map((t) => ({ model: t.model, cost: estimateCost(t, prices) }));
  const priced = costs.filter((c): c is { model: string; cost: number } => c.cost !== null);
  const unknown = costs.filter((c) => c.cost === null).map((c) => `\`${c.model}\``);
  const cost = priced.length ? ` · estimated cost about $${priced.reduce((n, c) => n + c.cost, 0).toFixed(2)} (an estimate from list prices, not a bill)` : "";
  const unpriced = unknown.length ? ` · unknown model ${unknown.join(", ")}: tokens only` : "";
  return `- AI model tokens: ${thousands(sum((t) => t.input + t.cacheWrite))} sent, ${thousands(sum((t) => t.cacheRead))} re-read from cache, ${thousands(sum((t) => t.output))} written${cost}${unpriced}`;
}

/** Who used cairn and how often it could not answer. */
function usage(u: ReportUsage, m: ReportMetrics): ReportSection {
  const [thisWeek, lastWeek] = [m.weeks.at(-1)!, m.weeks.at(-2)!] as [WeekFigures, WeekFigures];
  const other = u.unanswered - u.modelFailures;
  const why = [
    u.modelFailures ? `${u.modelFailures} because its AI model could not be reached or stopped mid-answer` : null,
    other ? `${other} for ${other === 1 ? "another reason" : "other reasons"}, such as the hourly message limit or a post the platform refused` : null,
  ].filter(Boolean);
  const model = u.unanswered ? ` (it apologised instead: ${why.join("; ")})` : "";
  return {
    heading: "Who used cairn",
    aside: "(private messages counted, never quoted)",
    lines: [
      `- People who talked to cairn: **${u.people}** · conversations: **${u.conversations}**`,
      `- Questions answered: **${thisWeek.replies}** (last week ${lastWeek.replies}) · 8 weeks ${sparkline(m.weeks.map((w) => w.replies))}`,
      `- Questions cairn couldn't answer: **${u.unanswered}**${model}`,
      `- AI model failures: **${u.modelFailures}**`,
      ...(u.tokens ? [tokenLine(u.tokens, u.prices)] : []),
    ],
  };
}

function learning(m: ReportMetrics): ReportSection {
  const [thisWeek, lastWeek] = [m.weeks.at(-1)!, m.weeks.at(-2)!] as [WeekFigures, WeekFigures];
  const s = m.skills;
  const rates = m.weeks.map((w) => w.per100);
  const used = s.mostUsed.length ? ` · most used: ${s.mostUsed.map((u) => `\`${u.name}\` (${u.reads})`).join(", ")}` : "";
  const more = s.neverUsedCount > s.neverUsed.length ? ` (+${s.neverUsedCount - s.neverUsed.length} more)` : "";
  const unused = s.neverUsedCount ? ` · never used: ${s.neverUsed.map((n) => `\`${n}\``).join(", ")}${more}` : "";
  return {
    heading: "Corrections and what cairn remembers",
    lines: [
      `- Answers people corrected: **${thisWeek.corrections}**, ${rate(thisWeek.per100)} per 100 answers${arrow(thisWeek.per100, lastWeek.per100)} (last week ${lastWeek.corrections}, ${rate(lastWeek.per100)}) · ${m.correctionsLearned} turned into lessons`,
      `- Corrections per 100 answers, 8 weeks: ${sparkline(rates)}${span(rates)}`,
      `- Lessons from corrections: ${m.lessons.proposed} proposed as team rules · ${m.lessons.approved} approved by a teammate · ${m.lessons.promoted} became team rules · ${m.lessons.private} kept private (from private messages)`,
      `- Team rules cairn follows: ${m.rules.added} added · ${m.rules.archived} retired · ${m.rules.active} in all`,
      `- Skills (written how-tos cairn can follow): ${s.created} created · ${s.patched} updated${used}${unused}`,
      `- What cairn knows now, start → end of week: ${growth("for the team", m.memory.team)} · ${growth("for channels", m.memory.channel)} · ${growth("about individuals", m.memory.user)}`,
    ],
  };
}

function repeated(r: RepeatedProblems): ReportSection | null {
  if (r.byWords.length === 0 && r.byRule.length === 0) return null;
  const lines: string[] = [];
  for (const t of r.byWords) {
    const who = t.people.length ? ` (${t.people.join(", ")})` : "";
    const name = t.question ? `"${t.question}"` : "One question, not quoted here,";
    lines.push(`- ${name} needed correcting ${plural(t.lessons, "time")}${who}`);
  }
  // The rule is doubtful now: an admin keeps it, rewords it or retires it.
  for (const t of r.byRule) {
    lines.push(`- The team rule ${q(t.text)} was among the rules cairn followed in ${plural(t.corrections, "answer")} people corrected: admins can keep it (${typed("keep", t.ruleId)}), reword it (${typed("reword", t.ruleId, "<new text>")}) or retire it (${typed("forget", t.ruleId)})`);
  }
  return { heading: "Repeated problems", aside: "(the same kind of question corrected more than once this week)", lines };
}

const answers = (n: number) => plural(n, "answer");
const praisedCount = (c: PraisedCount) => `${answers(c.replies)}, praised ${plural(c.praise, "time")}`;

/** What people liked this week: none of it when nothing was praised. */
function praised(p: Praised): ReportSection | null {
  if (p.replies === 0) return null;
  const lines = [`- ${praisedCount(p)}`];
  for (const t of p.topics) lines.push(`- "${t.question}": ${praisedCount(t)}`);
  if (p.skills.length) lines.push(`- Skills those answers used: ${p.skills.map((s) => `\`${s.name}\` (${praisedCount(s)})`).join(", ")}`);
  return { heading: "Most praised answers", aside: "(a 👍 or other praise this week; private messages left out)", lines };
}

const KINDS: Record<string, string> = { rule: "team rule", lesson: "lesson", fact: "fact" };

function learned(items: readonly LearnedItem[], n: Narrative | null): ReportSection {
  const heading = "What cairn learned this week";
  if (items.length === 0) return { heading, lines: ["- Nothing new for the whole team this week."] };
  const lines: string[] = [];
  for (const item of items.slice(0, LEARNED_MAX)) {
    const who = [item.taughtBy ? `taught by ${item.taughtBy}` : null, item.approvedBy ? `approved by ${item.approvedBy}` : null].filter(Boolean).join(", ");
    lines.push(`- ${n?.summaries[item.id] ?? excerpt(item.text, 240)} _(${KINDS[item.kind] ?? "fact"}${who ? `, ${who}` : ""})_`);
  }
  if (items.length > LEARNED_MAX) lines.push(`- …and ${items.length - LEARNED_MAX} more (${typed("lessons")} lists them)`);
  return { heading, lines };
}

/** Buttons for the first proposals to retire a rule (Discord holds 25 buttons a message, the loop's sections take some). */
const PROPOSAL_BUTTONS = 3;

function proposals(n: Narrative | null, rules: readonly RuleInfo[]): ReportSection | null {
  if (!n || n.proposals.length === 0) return null;
  const text = (id: string) => q(rules.find((r) => r.id === id)?.text ?? id);
  const retire = n.proposals.filter((p) => p.kind === "prune").slice(0, PROPOSAL_BUTTONS);
  return {
    heading: "Suggestions",
    aside: "(cairn's suggestions; a person decides)",
    lines: n.proposals.map((p) => {
      const [a, b] = p.ruleIds as [string, string];
      return p.kind === "prune"
        ? `- Retire the team rule ${text(a)}: ${p.reason} · admins: ${typed("forget", a)}`
        : `- The team rules ${text(a)} and ${text(b)} disagree: ${p.reason} · admins keep one by retiring the other: ${typed("forget", a)} or ${typed("forget", b)}`;
    }),
    buttons: retire.map((p, i) => ({
      label: `Retire rule ${i + 1}`,
      command: "forget",
      args: [p.ruleIds[0]!],
      style: "danger",
      confirm: { title: "Retire this team rule?", text: `cairn stops following ${text(p.ruleIds[0]!)}. An admin can bring it back.`, yes: "Retire it", no: "Keep it" },
    })),
  };
}

export function reportLayout(v: ReportView): ReportLayout {
  const m = v.metrics;
  const title = { lead: "cairn's weekly report", rest: `${v.workspaceName ? ` for ${v.workspaceName}` : ""}, ${day(m.periodStart)} to ${day(m.periodEnd)}` };
  const sections = [usage(v.usage, m), learning(m), repeated(v.repeated), praised(v.praised), learned(v.learned, v.narrative), ...(v.loop ?? []), proposals(v.narrative, v.rules)];
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
