/**
 * The `curator` job, queued by the scheduler once per cron slot (or by an admin): runs the curator
 * over every workspace (curator.ts) and resolves to a short summary. Its run id is derived from the
 * slot, so a re-run of the same job (a lost lease, a retry after a failed workspace) writes its
 * revisions under the same run id; every change is conditional on what it planned on, so a second
 * run only does what the first did not.
 */
import { z } from "zod";
import { defineJob } from "../jobs/worker.ts";
import { runCurator, summarize, type CuratorContext } from "./curator.ts";

export const CuratorPayload = z.object({
  slot: z.string().min(1).max(200),
  dryRun: z.boolean(),
  requestedBy: z.string().optional(),
});
export type CuratorPayload = z.infer<typeof CuratorPayload>;

/** The run id a slot's revisions carry: `/cairn history <run id>` lists them. */
export const curatorRunId = (p: Pick<CuratorPayload, "slot">) => `curator:${p.slot}`;

export function curatorJob(ctx: CuratorContext) {
  return defineJob({
    kind: "curator",
    payload: CuratorPayload,
    async run(p, signal) {
      ctx.log.info({ slot: p.slot, dryRun: p.dryRun, requestedBy: p.requestedBy }, "curator run starting");
      const outcome = await runCurator(ctx, { runId: curatorRunId(p), dryRun: p.dryRun, now: ctx.now(), signal });
      const summary = summarize(outcome);
      // A workspace that failed is tried again with the job (what was done is not done twice).
      if (outcome.failed.length) throw new Error(summary);
      return summary;
    },
  });
}
