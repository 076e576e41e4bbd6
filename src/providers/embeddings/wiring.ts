/**
 * The embeddings provider as a core runs it: its store and worker when an endpoint is set, and the
 * query path a search takes (under the providers' deadline). Null when embeddings are off: every
 * search is by words alone and nothing is embedded.
 */
import { errText, type Logger } from "../../ground/log.ts";
import type { Scope } from "../../ground/types.ts";
import { cosine } from "../../ground/vector.ts";
import type { Metrics } from "../../ops/metrics.ts";
import type { EmbeddingsSettings } from "./client.ts";
import { Embedder, type QueryVector } from "./embedder.ts";
import { VectorStore } from "./vector-store.ts";

export interface Embeddings {
  embedder: Embedder;
  store: VectorStore;
  /** A search's query vector within the deadline, or undefined (then words alone). */
  queryVector(text: string): Promise<QueryVector | undefined>;
  /**
   * Cosine similarity of the message's vector (when it comes in time) with each of these entries'
   * (lessons the turn may already show; those without a vector of their current text are left
   * out). Undefined when there is nothing to compare: recall is then by words alone.
   */
  similarity(scope: Scope, message: string, entryIds: readonly string[]): Promise<Map<string, number> | undefined>;
}

export function embeddingsFor(
  settings: (EmbeddingsSettings & { batch?: number; perMinute?: number }) | undefined,
  deps: { database: ConstructorParameters<typeof VectorStore>[0]; metrics: Metrics; log: Logger; deadlineMs: number },
): Embeddings | null {
  if (!settings) return null;
  const store = new VectorStore(deps.database);
  const embedder = new Embedder({ settings, store, metrics: deps.metrics, log: deps.log, batch: settings.batch, perMinute: settings.perMinute });
  return {
    embedder,
    store,
    queryVector: async (text) => (await embedder.queryVector(text, deps.deadlineMs)) ?? undefined,
    async similarity(scope, message, entryIds) {
      if (entryIds.length === 0) return undefined;
      const q = await embedder.queryVector(message, deps.deadlineMs, "lessons");
      if (!q) return undefined;
      try {
        const vectors = await store.entryVectors(scope, q.space, entryIds);
        return new Map([...vectors].map(([id, v]) => [id, cosine(v, q.vector)]));
      } catch (err) {
        deps.log.warn({ err: errText(err) }, "embeddings: lesson vectors could not be read; lessons by words alone");
        return undefined;
      }
    },
  };
}
