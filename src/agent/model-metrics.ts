/**
 * Model calls measured where they are made: a `ModelClient` that wraps another and records each
 * call's latency, tokens and result under its purpose. Every caller gets its model client from the
 * core or the learning loop already wrapped, so no call goes unmeasured.
 */
import { APIUserAbortError } from "@anthropic-ai/sdk";
import { ModelUnavailableError, type ModelClient } from "./model.ts";
import type { Metrics, ModelCallResult, ModelUsage } from "../ops/metrics.ts";

function resultOf(err: unknown): ModelCallResult {
  if (err instanceof ModelUnavailableError) return err.reason;
  // A cancelled call (a job stopping, its lease lost) is the caller's decision, not a failure.
  if (err instanceof APIUserAbortError) return "aborted";
  return "error";
}

/** `client`, with every call recorded in `metrics` under `purpose` (turn, summary, review, ...). */
export function instrumentModel(client: ModelClient, metrics: Metrics, purpose: string): ModelClient {
  const measured = async <T extends { usage: ModelUsage }>(model: string, workspaceId: string, call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      const message = await call();
      metrics.modelCall({ purpose, model, seconds: seconds(), usage: message.usage, result: "ok", workspaceId });
      return message;
    } catch (err) {
      metrics.modelCall({ purpose, model, seconds: seconds(), usage: null, result: resultOf(err), workspaceId });
      throw err;
    }
  };
  const stream = client.stream?.bind(client);
  return {
    create: (params, call) => measured(params.model, call.workspaceId, () => client.create(params, call)),
    // Only where the client streams: callers fall back to `create` when `stream` is absent.
    ...(stream ? { stream: (params, onText, call) => measured(params.model, call.workspaceId, () => stream(params, onText, call)) } : {}),
  };
}
