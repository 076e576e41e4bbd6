/**
 * What the core counts about its own work, kept out of core.ts: a turn's outcome and duration from
 * what `handle` returned, and a reply or post the platform refused from what delivery reported.
 */
import type { Posted, Received } from "../ground/adapter.ts";
import type { HandleResult } from "../ground/types.ts";
import type { Metrics, TurnOutcome } from "./metrics.ts";

function outcomeOf(result: HandleResult): TurnOutcome {
  return result.kind === "dropped" ? `dropped_${result.reason}` : result.reply.status;
}

/** Counts the turn `handling` settles into (`error`: it threw, which the adapter then answers). */
export async function countTurn(metrics: Metrics, handling: Promise<HandleResult>): Promise<HandleResult> {
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  try {
    const result = await handling;
    const outcome = outcomeOf(result);
    // A dropped message did no work worth timing.
    metrics.turn(outcome, result.kind === "reply" ? seconds() : undefined);
    return result;
  } catch (err) {
    metrics.turn("error", seconds());
    throw err;
  }
}

/** Counts a reply or post some part of which the platform refused for good. */
export async function countDelivery<T extends Received | Posted>(metrics: Metrics, delivering: Promise<T>): Promise<T> {
  const done = await delivering;
  if ("failed" in done && done.failed) metrics.error("delivery");
  return done;
}
