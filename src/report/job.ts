/**
 * The `report` job: the weekly report of every workspace for one schedule slot, queued by the
 * scheduler with `{ slot, requestedBy? }`. The week is [slot - 7 days, slot).
 *
 * Invariants kept here:
 * - One report per workspace and slot (Report's unique key). A workspace that has one for the slot
 *   is passed over, so a re-run (a retry, a lost lease, the same slot queued twice) posts nothing more.
 * - The row is written before the post: a crash between the two leaves it stored but not posted,
 *   never posted twice. A post that throws takes its row back and fails the job, so the retry posts it.
 * - Only the report of the workspace CAIRN_REPORT_CHANNEL belongs to is posted, and only there.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import { errText } from "../ground/log.ts";
import { describeChannel, isDmWorkspace, postTarget, workspaceOfChannel } from "./channel.ts";
import type { ReportChannel } from "../learning/settings.ts";
import { buildReport, type BuiltReport, type ReportContext } from "./build.ts";
import type { ReportWorkspace } from "./report-store.ts";

export const ReportPayload = z.object({
  /** The slot's time (ISO), or "manual:<ISO time>" for a run someone asked for. */
  slot: z.string().refine((s) => !Number.isNaN(slotEnd(s).getTime()), "slot must be an ISO time, or manual:<ISO time>"),
  requestedBy: z.string().optional(),
});
export type ReportPayload = z.infer<typeof ReportPayload>;

export function slotEnd(slot: string): Date {
  return new Date(slot.startsWith("manual:") ? slot.slice("manual:".length) : slot);
}

export function reportJob(ctx: ReportContext) {
  return defineJob({
    kind: "report",
    payload: ReportPayload,
    run: (p, signal) => runReports(ctx, p, signal),
  });
}

/** Builds, stores and (for the report channel's workspace) posts every workspace's report; a summary line. */
export async function runReports(ctx: ReportContext, p: ReportPayload, signal?: AbortSignal): Promise<string> {
  const end = slotEnd(p.slot);
  const log = ctx.log.child({ job: "report", slot: p.slot, ...(p.requestedBy ? { requestedBy: p.requestedBy } : {}) });
  const channel = ctx.settings.learning.reportChannel;
  const postTo = channel ? await workspaceOfChannel(ctx.reports, channel) : null;
  if (channel && !postTo) log.warn({ channel: describeChannel(channel) }, "no single workspace owns CAIRN_REPORT_CHANNEL; reports are stored only");
  // Teams cairn was used in before the slot (a Discord DM's pseudo-workspace is one person's: no report).
  const used = await ctx.reports.usedBefore(end);
  const workspaces = used.filter((w) => !isDmWorkspace(w.workspace));
  const counts = { stored: 0, already: 0, posted: 0 };
  for (const ws of workspaces) {
    if (signal?.aborted) break;
    if (await ctx.reports.made(ws.scope, p.slot)) {
      counts.already++;
      continue;
    }
    const report = await buildReport(ctx, ws, end, signal);
    if (signal?.aborted) break;
    // Another run stored it first (null): that run posts it.
    const row = await ctx.reports.save(ws.scope, p.slot, report);
    if (!row) {
      counts.already++;
      continue;
    }
    counts.stored++;
    if (channel && postTo?.workspace.id === ws.workspace.id) {
      await post(ctx, ws, channel, row.id, report);
      counts.posted++;
      log.info({ workspace: ws.workspace.id, channel: describeChannel(channel) }, "weekly report posted");
    }
  }
  const where = counts.posted && channel ? ` (posted to ${describeChannel(channel)})` : "";
  return `${counts.stored} report${counts.stored === 1 ? "" : "s"} stored${where}, ${counts.already} already made for ${p.slot}`;
}

/** The rich form where the platform has one (Slack blocks, a Discord embed); the Markdown text otherwise, and in history. */
async function post(ctx: ReportContext, ws: ReportWorkspace, channel: ReportChannel, rowId: string, report: BuiltReport): Promise<void> {
  try {
    await ctx.post(channel.platform, postTarget(ws.workspace, channel), report.text, report.rich);
  } catch (err) {
    // Nothing reached the channel: the row goes, so the job's retry makes and posts it again.
    await ctx.reports.remove(ws.scope, rowId);
    ctx.log.warn({ err: errText(err), workspace: ws.workspace.id }, "the weekly report could not be posted; the job will retry");
    throw err;
  }
}
