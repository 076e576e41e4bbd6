/**
 * Who used cairn this week and how it held up: people who talked to it, conversations, questions
 * answered, questions it could not answer (replies stored as failed), and of those the ones where
 * its language model could not be reached (the apology texts of ground/replies.ts, stored verbatim
 * as the reply). Tokens come from the usage ledger (ops/usage-ledger.ts: every model call, counted
 * against the workspace it served, by UTC day), summed by model over the week's days.
 */
import type { WorkspaceScope } from "../ground/scope.ts";
import { MODEL_INTERRUPTED_REPLY, MODEL_KEY_REFUSED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../ground/replies.ts";
import type { Period } from "./metrics.ts";
import { PRICES, type Price, type TokenUse } from "./prices.ts";
import type { ReportStore } from "./report-store.ts";
import type { UsageTotal } from "../ops/usage-store.ts";
import { hourOf } from "../ops/usage-ledger.ts";

const HOUR_MS = 3_600_000;

/** The model usage the ledger kept: written out first, then read for the UTC hours [fromHour, toHour). */
export interface UsageSource {
  flush(): Promise<void>;
  totals(workspaceId: string, fromHour: string, toHour: string): Promise<UsageTotal[]>;
}

/** The replies that say the model failed: unreachable, its key refused, or cut off mid-answer. */
export const MODEL_FAILURE_REPLIES = [MODEL_UNAVAILABLE_REPLY, MODEL_KEY_REFUSED_REPLY, MODEL_INTERRUPTED_REPLY] as const;

export interface ReportUsage {
  /** Distinct people (not bots) who wrote to cairn, DMs included. */
  people: number;
  conversations: number;
  /** Replies sent (as metrics.ts counts them). */
  answered: number;
  /** Replies stored as failed: the person got an apology or a notice instead of an answer. */
  unanswered: number;
  /** Of those, the model's failures (MODEL_FAILURE_REPLIES). */
  modelFailures: number;
  /** Tokens per model, where recorded; null: not recorded. */
  tokens: TokenUse[] | null;
  /** The prices their cost is estimated with (prices.ts, CAIRN_MODEL_PRICES over it). */
  prices: Readonly<Record<string, Price>>;
}

export async function usageOfWeek(reports: ReportStore, scope: WorkspaceScope, p: Period, answered: number, source?: UsageSource, prices: Readonly<Record<string, Price>> = PRICES): Promise<ReportUsage> {
  const [activity, failed, tokens] = await Promise.all([reports.activity(scope, p), reports.unanswered(scope, p, MODEL_FAILURE_REPLIES), source ? tokensOfWeek(source, scope, p) : null]);
  return { ...activity, answered, unanswered: failed.failed, modelFailures: failed.apologised, tokens, prices };
}

/**
 * The week's tokens by model, from the ledger's hours: from the hour the period starts in through
 * the hour its end falls in (a slot on the hour, 09:00, ends with 08:00-09:00; a report asked for at
 * 16:40 counts this hour so far). Null when nothing was recorded, so a database from before the
 * ledger shows no line rather than zeros.
 */
async function tokensOfWeek(source: UsageSource, scope: WorkspaceScope, p: Period): Promise<TokenUse[] | null> {
  await source.flush();
  const rows = await source.totals(scope.workspaceId, hourOf(p.start), hourOf(new Date(p.end.getTime() - 1 + HOUR_MS)));
  if (rows.length === 0) return null;
  const byModel = new Map<string, TokenUse>();
  for (const r of rows) {
    const t = byModel.get(r.model) ?? { model: r.model, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    t.input += r.inputTokens;
    t.output += r.outputTokens;
    t.cacheRead += r.cacheReadTokens;
    t.cacheWrite += r.cacheWriteTokens;
    byModel.set(r.model, t);
  }
  return [...byModel.values()];
}
