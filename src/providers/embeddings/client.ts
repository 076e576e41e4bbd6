/**
 * An OpenAI-compatible embeddings API (`POST <base>/embeddings`): the shape hosted providers and
 * local servers (Ollama, vLLM, TEI, LM Studio) all speak. One request per batch; what comes back is
 * outside input, so its shape, its count and every vector's length are checked before anything is
 * kept, and each way it can go wrong is an EmbeddingsError whose message says what to fix.
 */
import { z } from "zod";

export interface EmbeddingsSettings {
  /** The API's base URL, e.g. https://host/v1 (cairn posts to <url>/embeddings). */
  url: string;
  model: string;
  apiKey?: string | undefined;
  /** Asked for when set (models that can shorten their vectors), and required of every vector. */
  dimensions?: number | undefined;
  timeoutMs: number;
}

export type EmbeddingsFailure = "unreachable" | "timeout" | "refused" | "http" | "malformed" | "dimension";

export class EmbeddingsError extends Error {
  override name = "EmbeddingsError";
  constructor(
    readonly reason: EmbeddingsFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

const Answer = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number().finite()).min(1) })),
  model: z.string().optional(),
});

/** The vectors of `texts`, in their order. Throws EmbeddingsError. */
export async function embed(settings: EmbeddingsSettings, texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  const endpoint = `${settings.url.replace(/\/+$/, "")}/embeddings`;
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify({ model: settings.model, input: texts, encoding_format: "float", ...(settings.dimensions ? { dimensions: settings.dimensions } : {}) }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    if (timeout.aborted) throw new EmbeddingsError("timeout", `no answer from ${endpoint} within ${settings.timeoutMs} ms`);
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    throw new EmbeddingsError("unreachable", `could not reach ${endpoint}: ${cause}`);
  }
  const body = await res.text().catch(() => "");
  if (res.status === 401 || res.status === 403) throw new EmbeddingsError("refused", `${endpoint} refused the key (${res.status}): set CAIRN_EMBEDDINGS_API_KEY to one it accepts`, res.status);
  if (!res.ok) throw new EmbeddingsError("http", `${endpoint} answered ${res.status}: ${body.slice(0, 200)}`, res.status);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new EmbeddingsError("malformed", `${endpoint} did not answer JSON: is CAIRN_EMBEDDINGS_URL the API's base URL (…/v1)?`);
  }
  const parsed = Answer.safeParse(json);
  if (!parsed.success) throw new EmbeddingsError("malformed", `${endpoint} answered something that is not an embeddings list ({ data: [{ index, embedding }] })`);
  const byIndex = new Map(parsed.data.data.map((d) => [d.index, d.embedding]));
  if (byIndex.size !== texts.length || texts.some((_, i) => !byIndex.has(i))) {
    throw new EmbeddingsError("malformed", `${endpoint} answered ${parsed.data.data.length} vectors for ${texts.length} texts`);
  }
  const vectors = texts.map((_, i) => Float32Array.from(byIndex.get(i)!));
  const want = settings.dimensions ?? vectors[0]!.length;
  const odd = vectors.find((v) => v.length !== want);
  if (odd) {
    const fix = settings.dimensions ? "set CAIRN_EMBEDDINGS_DIMENSIONS to what the model gives, or unset it" : "the model's vectors must all have one length";
    throw new EmbeddingsError("dimension", `${settings.model} answered a vector of ${odd.length} dimensions where ${want} were expected: ${fix}`);
  }
  return vectors;
}
