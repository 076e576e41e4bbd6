/** `/cairn report`: the latest weekly review of the asker's workspace, shown to the asker alone. */
import type { WorkspaceScope } from "../ground/scope.ts";
import type { ReportStore } from "../report/report-store.ts";

export const NO_REPORT_YET = "No weekly report for this workspace yet: the first one is made at the next scheduled run.";

export async function latestReport(reports: ReportStore, scope: WorkspaceScope): Promise<{ text: string; ephemeral: boolean }> {
  const report = await reports.latest(scope);
  return { text: report ? report.text : NO_REPORT_YET, ephemeral: true };
}
