/** Stand-ins for the curator and report handlers (written elsewhere): they record each run they are given. */
import { z } from "zod";
import { defineJob, type JobHandler } from "../../src/jobs/worker.ts";

export interface RecordedRun {
  kind: "curator" | "report";
  slot: string;
  dryRun?: boolean;
  requestedBy?: string;
}

export function recordingHandlers(): { handlers: JobHandler<unknown>[]; runs: RecordedRun[] } {
  const runs: RecordedRun[] = [];
  const curator = defineJob({
    kind: "curator",
    payload: z.object({ slot: z.string(), dryRun: z.boolean(), requestedBy: z.string().optional() }),
    async run(p) {
      runs.push({ kind: "curator", ...p });
      return p.dryRun ? "dry run: would archive 2 skills" : "archived 2 skills";
    },
  });
  const report = defineJob({
    kind: "report",
    payload: z.object({ slot: z.string(), requestedBy: z.string().optional() }),
    async run(p) {
      runs.push({ kind: "report", ...p });
      return "posted to #team";
    },
  });
  return { handlers: [curator, report], runs };
}
