/**
 * Model usage kept per workspace, UTC hour, model and purpose (the ModelUsage table). Counts are
 * added to, never overwritten (upserts with increments), so replicas adding at once stay exact.
 */
import type { Db } from "../db/client.ts";

export interface UsageCounts {
  calls: number;
  failures: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface UsageRow extends UsageCounts {
  workspaceId: string;
  /** UTC hour, YYYY-MM-DDTHH. */
  hour: string;
  model: string;
  purpose: string;
}

export type UsageTotal = UsageCounts & { model: string; purpose: string };

export class UsageStore {
  constructor(private readonly db: Db) {}

  /** Adds each row's counts to what is stored for its key, all or none. */
  async add(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    const p = this.db;
    await p.$transaction(
      rows.map(({ workspaceId, hour, model, purpose, ...counts }) =>
        p.modelUsage.upsert({
          where: { workspaceId_hour_model_purpose: { workspaceId, hour, model, purpose } },
          create: { workspaceId, hour, model, purpose, ...counts },
          update: {
            calls: { increment: counts.calls },
            failures: { increment: counts.failures },
            inputTokens: { increment: counts.inputTokens },
            outputTokens: { increment: counts.outputTokens },
            cacheReadTokens: { increment: counts.cacheReadTokens },
            cacheWriteTokens: { increment: counts.cacheWriteTokens },
          },
        }),
      ),
    );
  }

  /** A workspace's usage over the UTC hours [fromHour, toHour), summed by model and purpose. */
  async totals(workspaceId: string, fromHour: string, toHour: string): Promise<UsageTotal[]> {
    const groups = await this.db.modelUsage.groupBy({
      by: ["model", "purpose"],
      where: { workspaceId, hour: { gte: fromHour, lt: toHour } },
      _sum: { calls: true, failures: true, inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true },
      orderBy: [{ model: "asc" }, { purpose: "asc" }],
    });
    return groups.map((g) => ({
      model: g.model,
      purpose: g.purpose,
      calls: g._sum.calls ?? 0,
      failures: g._sum.failures ?? 0,
      inputTokens: g._sum.inputTokens ?? 0,
      outputTokens: g._sum.outputTokens ?? 0,
      cacheReadTokens: g._sum.cacheReadTokens ?? 0,
      cacheWriteTokens: g._sum.cacheWriteTokens ?? 0,
    }));
  }
}
