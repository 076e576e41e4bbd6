/**
 * The `verify` job (issue 27): once a month (CAIRN_VERIFY_CRON), queued by the scheduler with
 * `{ slot, requestedBy? }` like the report, lists in the report channel (CAIRN_REPORT_CHANNEL) the
 * shared items of its workspace nobody confirmed for CAIRN_VERIFY_DAYS, oldest and most used first,
 * and the lessons and rules whose confidence decayed over CAIRN_DECAY_DAYS unused, proposed for
 * archiving. It changes nothing: people confirm (`verify`) or archive (`forget`).
 *
 * Once per slot across replicas: the scheduler's unique key makes a slot one job. The post is the
 * job's last step, so only a crash between the post and the job's completion repeats it. Every
 * workspace's own list is in its Home tab (views/build.ts), whatever the channel.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import type { LearningContext } from "../learning/context.ts";
import type { ReportStore } from "../report/report-store.ts";
import { describeChannel, postTarget, workspaceOfChannel } from "../report/channel.ts";
import { freshnessPost } from "./lines.ts";

export const VerifyPayload = z.object({
  /** The slot's time (ISO): items are judged as of then. */
  slot: z.string().refine((s) => !Number.isNaN(new Date(s).getTime()), "slot must be an ISO time"),
  requestedBy: z.string().optional(),
});
export type VerifyPayload = z.infer<typeof VerifyPayload>;

/** Items of each list in the post; the rest are counted (the Home tab lists them all). */
export const POSTED_ITEMS = 15;

export interface VerifyContext extends Pick<LearningContext, "verified" | "post" | "settings" | "log"> {
  reports: ReportStore;
}

export function verifyJob(ctx: VerifyContext) {
  return defineJob({ kind: "verify", payload: VerifyPayload, run: (p) => runVerify(ctx, p) });
}

/** Lists what is due in the report channel's workspace, there; a summary line. */
export async function runVerify(ctx: VerifyContext, p: VerifyPayload): Promise<string> {
  const now = new Date(p.slot);
  const log = ctx.log.child({ job: "verify", slot: p.slot, ...(p.requestedBy ? { requestedBy: p.requestedBy } : {}) });
  const channel = ctx.settings.learning.reportChannel;
  if (!channel) return "no CAIRN_REPORT_CHANNEL: what is due is listed in each Home tab only";
  const ws = await workspaceOfChannel(ctx.reports, channel);
  if (!ws) {
    log.warn({ channel: describeChannel(channel) }, "no single workspace owns CAIRN_REPORT_CHANNEL; nothing due is posted");
    return "no single workspace owns CAIRN_REPORT_CHANNEL: nothing posted";
  }
  const { verifyDays, decayDays } = ctx.settings.learning.freshness;
  const [due, decaying] = await Promise.all([
    ctx.verified.due(ws.scope, { now, days: verifyDays, limit: POSTED_ITEMS, decayDays }),
    ctx.verified.decaying(ws.scope, { now, days: decayDays, limit: POSTED_ITEMS }),
  ]);
  const text = freshnessPost(due, decaying, { verifyDays, decayDays });
  const counts = `${due.total} due for confirmation, ${decaying.total} proposed for archiving`;
  if (!text) return `${counts}: nothing posted`;
  await ctx.post(channel.platform, postTarget(ws.workspace, channel), text);
  log.info({ workspace: ws.workspace.id, due: due.total, decaying: decaying.total }, "memory due for confirmation posted");
  return `${counts} (posted to ${describeChannel(channel)})`;
}
