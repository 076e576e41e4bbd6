/**
 * The start-up check of ANTHROPIC_API_KEY (issue 28): one request for one token, so a refused key
 * stops start-up with a sentence instead of every first question meeting the outage apology.
 * Anything else going wrong (network, 5xx, timeout, an unknown model) leaves the key unproven but
 * not refused: cairn starts, and the outage path answers people while it lasts.
 */
import { APIError } from "@anthropic-ai/sdk";
import { isKeyRefused, type ModelClient } from "./model.ts";

/** The check's one message; the fake Anthropic answers it without spending a scripted reply. */
export const KEY_CHECK_PROMPT = "cairn start-up key check: reply with one word.";

export type KeyCheck = { outcome: "ok" } | { outcome: "refused"; status: number | undefined } | { outcome: "unchecked"; reason: string };

/**
 * Asks `model` (a client built for one attempt: a start-up does not wait out a backoff) for one
 * token of `modelName`, giving up after `timeoutMs`. Never throws.
 */
export async function checkModelKey(model: ModelClient, modelName: string, timeoutMs: number): Promise<KeyCheck> {
  try {
    await model.create({ model: modelName, max_tokens: 1, messages: [{ role: "user", content: KEY_CHECK_PROMPT }] }, { signal: AbortSignal.timeout(timeoutMs), workspaceId: "" });
    return { outcome: "ok" };
  } catch (err) {
    const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
    if (isKeyRefused(err)) return { outcome: "refused", status: cause instanceof APIError ? cause.status : undefined };
    return { outcome: "unchecked", reason: cause instanceof Error ? cause.message : String(cause) };
  }
}
