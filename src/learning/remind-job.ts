/**
 * The `remind` job (schedule "remind", hourly by default): nothing waits for approval unseen. A
 * proposal waiting longer than `learning.freshness.remindHours` (CAIRN_APPROVAL_REMIND_HOURS) is
 * posted once more in its thread, with its buttons; and every admin of the workspace's platform
 * (CAIRN_ADMINS) gets a DM listing what is overdue, at most once a day.
 *
 * Invariants kept here:
 * - One reminder per item: `remindedAt` is claimed before the post (approval-store.ts), so a second
 *   run, or a replica's run of the same slot, posts nothing more; a post that failed hands it back.
 * - One digest per workspace and day (UTC): it is a job of its own, queued under the unique key
 *   `remind-digest:<workspace>:<day>`, so runs later that day queue nothing, and a digest that
 *   could reach no admin is retried by the worker like any job.
 * - A reminder is never posted into a DM (a person's own; teammates judge there nothing): such an
 *   item is marked all the same, and the digest and the views list it.
 */
import { z } from "zod";
import { defineJob, type JobHandler } from "../jobs/worker.ts";
import { errText } from "../ground/log.ts";
import type { Platform, WorkspaceScope } from "../ground/types.ts";
import type { RichPost } from "../ground/adapter.ts";
import type { AccessPolicy } from "../admission/access.ts";
import { dayOf } from "../memory/validity.ts";
import type { LearningContext } from "./context.ts";
import { remindedAtOf, type WaitingRow, type WaitingWorkspace } from "./approval-store.ts";
import { ageText, describe, overdue, queueButtons, queueSection, typedCommands } from "./approval-queue.ts";

export const DIGEST_KIND = "remind-digest";

export const RemindPayload = z.object({ slot: z.string().min(1).max(200), requestedBy: z.string().optional() });
export const DigestPayload = z.object({ workspaceId: z.string().min(1).max(200), day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) });
export type DigestPayload = z.infer<typeof DigestPayload>;

export type RemindContext = Pick<LearningContext, "approvals" | "places" | "post" | "jobs" | "settings" | "log" | "now">;

export function remindJobs(ctx: RemindContext): JobHandler<unknown>[] {
  return [
    defineJob({ kind: "remind", payload: RemindPayload, run: (_p, signal) => runReminders(ctx, signal) }),
    defineJob({ kind: DIGEST_KIND, payload: DigestPayload, run: (p) => sendDigest(ctx, p) }),
  ];
}

/** The admins of a platform, by their platform ids (CAIRN_ADMINS lists them prefixed: "slack:U1"). */
export function adminsOn(access: AccessPolicy, platform: Platform): string[] {
  const prefix = `${platform}:`;
  return [...access.admins].filter((a) => a.startsWith(prefix)).map((a) => a.slice(prefix.length));
}

/** Reminds what waited too long, workspace by workspace, and queues each one's digest of the day. */
export async function runReminders(ctx: RemindContext, signal?: AbortSignal): Promise<string> {
  const now = ctx.now();
  const hours = ctx.settings.learning.freshness.remindHours;
  const counts = { reminded: 0, digests: 0 };
  for (const ws of await ctx.approvals.workspaces()) {
    if (signal?.aborted) break;
    const late = (await ctx.approvals.waiting(ws.scope)).filter((r) => overdue(r, now, hours));
    for (const row of late) {
      if (signal?.aborted) break;
      if (remindedAtOf(row) === null && (await remind(ctx, ws.scope, row, now))) counts.reminded++;
    }
    if (late.length === 0 || adminsOn(ctx.settings.access, ws.workspace.platform as Platform).length === 0) continue;
    const day = dayOf(now);
    const queued = await ctx.jobs.enqueue(DIGEST_KIND, { workspaceId: ws.workspace.id, day } satisfies DigestPayload, { uniqueKey: `${DIGEST_KIND}:${ws.workspace.id}:${day}` });
    if (queued.created) counts.digests++;
  }
  return `${counts.reminded} reminded, ${counts.digests} digest${counts.digests === 1 ? "" : "s"} queued`;
}

/** The reminder's text: how long it waited, what it is, the commands. */
export function reminderText(row: WaitingRow, now: Date): string {
  return `⏰ Still waiting for a decision, ${ageText(now.getTime() - row.since.getTime())} now: ${describe(row)}. ${typedCommands(row)}`;
}

/** Claims the item's one reminder and posts it in its thread; true when it counts as reminded. */
async function remind(ctx: RemindContext, scope: WorkspaceScope, row: WaitingRow, now: Date): Promise<boolean> {
  if (!(await ctx.approvals.markReminded(row, now))) return false;
  try {
    const said = row.postId === null ? null : await ctx.places.saidIn(scope, row.postId);
    const where = said && !said.conversation.isDm ? await ctx.places.postTarget(said.workspace, said.conversation) : null;
    if (!where) return true;
    const text = reminderText(row, now);
    const rich: RichPost = { title: "Still waiting for a decision", sections: [{ markdown: text, buttons: queueButtons(row, 1).map((b) => ({ ...b, label: b.label.replace(/ 1$/, "") })) }] };
    await ctx.post(where.platform, where.target, text, rich);
    return true;
  } catch (err) {
    // Nothing reached the thread: the next run tries again.
    await ctx.approvals.unmark(row, now);
    ctx.log.warn({ err: errText(err), kind: row.kind }, "could not remind a proposal in its thread; trying again next run");
    return false;
  }
}

/** The digest of one workspace's overdue items, as a DM to each admin of its platform. */
export async function sendDigest(ctx: RemindContext, p: DigestPayload): Promise<string> {
  const ws = await ctx.approvals.workspace(p.workspaceId);
  if (!ws) return "workspace gone";
  const now = ctx.now();
  const late = (await ctx.approvals.waiting(ws.scope)).filter((r) => overdue(r, now, ctx.settings.learning.freshness.remindHours));
  const platform = ws.workspace.platform as Platform;
  const admins = adminsOn(ctx.settings.access, platform);
  if (late.length === 0 || admins.length === 0) return "nothing overdue";
  const { markdown, rich } = digestPost(ws, late, now);
  let sent = 0;
  for (const person of admins) {
    try {
      await ctx.post(platform, { kind: "dm", workspace: ws.workspace.externalId, person }, markdown, rich);
      sent++;
    } catch (err) {
      ctx.log.warn({ err: errText(err), admin: person, workspace: ws.workspace.id }, "could not send an admin the approval digest");
    }
  }
  // No admin got it: the worker retries the job (nobody is sent it twice).
  if (sent === 0) throw new Error(`the approval digest reached none of ${admins.length} admin(s)`);
  return `digest of ${late.length} item${late.length === 1 ? "" : "s"} sent to ${sent} admin${sent === 1 ? "" : "s"}`;
}

export function digestPost(ws: WaitingWorkspace, late: readonly WaitingRow[], now: Date): { markdown: string; rich: RichPost } {
  const title = `Waiting for approval${ws.workspace.name ? ` in ${ws.workspace.name}` : ""}: ${late.length} item${late.length === 1 ? "" : "s"}`;
  const { lines, buttons } = queueSection(late, now);
  const note = "The longest waiting first. A click runs the command as you would type it.";
  return { markdown: [`**${title}**`, note, ...lines].join("\n"), rich: { title, sections: [{ markdown: [note, ...lines].join("\n"), buttons }] } };
}
