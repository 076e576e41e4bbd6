/** One workspace's weekly report: the numbers, the learned list, the model's sentences, the message (Markdown and rich). */
import type { LearningContext } from "../learning/context.ts";
import type { ReportStore, ReportWorkspace } from "./report-store.ts";
import { activeAt } from "./lifetime.ts";
import { loadMemoryHistory } from "./memory-history.ts";
import { computeMetrics, periodEnding, type ReportMetrics } from "./metrics.ts";
import { learnedThisWeek, type LearnedItem } from "./learned.ts";
import { repeatedProblems, type RepeatedProblems } from "./topics.ts";
import { praisedThisWeek, type Praised } from "./praise.ts";
import { writeNarrative, type Narrative, type RuleInfo } from "./narrative.ts";
import type { RichPost } from "../ground/adapter.ts";
import { reportLayout, reportMarkdown, reportRich } from "./render.ts";
import { loopOfWeek, loopSections, type LoopData } from "./loop.ts";
import { withPrices } from "./prices.ts";
import { usageOfWeek, type ReportUsage, type UsageSource } from "./usage.ts";

/** What Report.data holds. */
export interface ReportData {
  metrics: ReportMetrics;
  /** Who used cairn, what it could not answer, its model's failures (usage.ts). */
  usage: ReportUsage;
  repeated: RepeatedProblems;
  /** The week's most praised answers: their topics and the skills they read. */
  praised: Praised;
  learned: LearnedItem[];
  narrative: Narrative | null;
  /** The curator's changes, facts that changed, what is due for confirmation, what waits for approval (loop.ts). */
  loop: LoopData;
}

export interface BuiltReport {
  start: Date;
  end: Date;
  data: ReportData;
  /** The Markdown message: stored, shown by `/cairn report`, posted where no rich form is. */
  text: string;
  /** The same report for platforms with a rich form (Slack blocks, a Discord embed). */
  rich: RichPost;
}

/** What building and posting the reports needs: the store, the model, the core's post, settings and log. */
export interface ReportContext extends Pick<LearningContext, "model" | "reviewModel" | "post" | "settings" | "log" | "approvals"> {
  reports: ReportStore;
  /** The model usage ledger (tokens and their cost); absent: the report has no token line. */
  usage?: UsageSource;
}

/** A week with nothing to tell (no replies, none failed, no corrections, nothing learned): no model call for it. */
function quiet(m: ReportMetrics, u: ReportUsage, learned: readonly LearnedItem[]): boolean {
  const w = m.weeks.at(-1)!;
  return w.replies === 0 && u.unanswered === 0 && w.corrections === 0 && learned.length === 0 && m.rules.added === 0 && m.rules.archived === 0;
}

export async function buildReport(ctx: ReportContext, ws: ReportWorkspace, end: Date, signal?: AbortSignal): Promise<BuiltReport> {
  const period = periodEnding(end);
  const { reports } = ctx;
  const entries = await loadMemoryHistory(reports, ws.scope);
  const verifyDays = ctx.settings.learning.freshness.verifyDays;
  const [metrics, repeated, praised, learned, loop] = await Promise.all([
    computeMetrics(reports, ws.scope, entries, period),
    repeatedProblems(reports, ws.scope, entries, period),
    praisedThisWeek(reports, ws.scope, period),
    learnedThisWeek(reports, ws.scope, entries, period),
    loopOfWeek(reports, ctx.approvals, ws.scope, period, verifyDays),
  ]);
  const usage = await usageOfWeek(reports, ws.scope, period, metrics.weeks.at(-1)!.replies, ctx.usage, withPrices(ctx.settings.learning.modelPrices));
  const rules: RuleInfo[] = entries
    .filter((e) => e.kind === "rule" && e.scope === "team" && activeAt(e.life, period.end))
    .map((e) => ({ id: e.id, text: e.text, since: e.life.from!.toISOString().slice(0, 10), confidence: e.confidence, flag: e.flag }));
  const narrative = quiet(metrics, usage, learned) ? null : await writeNarrative(ctx.model, ctx.reviewModel, ws.scope.workspaceId, { metrics, usage, learned, rules, repeated }, ctx.log, signal);
  const layout = reportLayout({ workspaceName: ws.workspace.name, metrics, usage, repeated, praised, learned, rules, narrative, loop: loopSections(loop, period.end, verifyDays) });
  return { start: period.start, end: period.end, data: { metrics, usage, repeated, praised, learned, narrative, loop: loop.data }, text: reportMarkdown(layout), rich: reportRich(layout) };
}
