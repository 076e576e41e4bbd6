/**
 * The embeddings endpoint, when one is set (CAIRN_EMBEDDINGS_URL): one tiny request with the model
 * and key cairn will use, and the length of the vector it returns.
 */
import type { Config } from "../app/config.ts";
import { embed, EmbeddingsError } from "../providers/embeddings/client.ts";
import { fail, pass, type CheckLine } from "./check.ts";

export async function checkEmbeddings(cfg: Config, timeoutMs: number, signal: AbortSignal): Promise<CheckLine[]> {
  const label = `embeddings ${cfg.CAIRN_EMBEDDINGS_MODEL ?? ""}`.trim();
  if (!cfg.CAIRN_EMBEDDINGS_URL || !cfg.CAIRN_EMBEDDINGS_MODEL) return [];
  const settings = { url: cfg.CAIRN_EMBEDDINGS_URL, model: cfg.CAIRN_EMBEDDINGS_MODEL, apiKey: cfg.CAIRN_EMBEDDINGS_API_KEY, dimensions: cfg.CAIRN_EMBEDDINGS_DIMENSIONS, timeoutMs };
  try {
    const [vector] = await embed(settings, ["cairn doctor"], signal);
    return [pass(label, `${cfg.CAIRN_EMBEDDINGS_URL} answers with vectors of ${vector!.length} dimensions`)];
  } catch (err) {
    if (!(err instanceof EmbeddingsError)) return [fail(label, `the request failed: ${err instanceof Error ? err.message : String(err)}`)];
    const fix: Record<EmbeddingsError["reason"], string> = {
      unreachable: "check CAIRN_EMBEDDINGS_URL, and that this machine can reach it",
      timeout: "check that the embeddings server is up; a local one may still be loading its model",
      refused: "set CAIRN_EMBEDDINGS_API_KEY to a key the endpoint accepts",
      http: "check CAIRN_EMBEDDINGS_MODEL (a model the endpoint serves) and CAIRN_EMBEDDINGS_URL (its base URL, like https://host/v1)",
      malformed: "point CAIRN_EMBEDDINGS_URL at an OpenAI-compatible API's base URL (…/v1)",
      dimension: "set CAIRN_EMBEDDINGS_DIMENSIONS to the length the model gives, or unset it",
    };
    return [fail(label, err.message, fix[err.reason])];
  }
}
