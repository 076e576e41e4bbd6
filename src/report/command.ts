/** `/cairn report`: the latest weekly review of the asker's workspace, shown to the asker alone. */
import type { Db } from "../db/client.ts";

export const NO_REPORT_YET = "No weekly report for this workspace yet: the first one is made at the next scheduled run.";

export async function latestReport(db: Db, workspaceId: string): Promise<{ text: string; ephemeral: boolean }> {
  const report = await db.report.findFirst({ where: { workspaceId }, orderBy: [{ periodEnd: "desc" }, { createdAt: "desc" }] });
  return { text: report ? report.text : NO_REPORT_YET, ephemeral: true };
}
