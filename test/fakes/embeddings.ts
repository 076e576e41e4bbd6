/**
 * A fake OpenAI-compatible embeddings API on 127.0.0.1 (`POST /v1/embeddings`), deterministic: a
 * text's vector is its words hashed into `dimensions` buckets and normalised, so texts sharing words
 * are near. A test can script paraphrases near each other (`alike`: every word of a group counts as
 * the group's first), and make the server slow, fail with a status, or answer the wrong dimension.
 */
import http from "node:http";
import { createHash } from "node:crypto";
import { listenLocal, readBody } from "./http.ts";

export interface EmbeddingsRequest {
  model: string;
  input: string[];
  dimensions?: number;
  authorization: string | null;
}

export interface FakeEmbeddings {
  /** The base URL to give cairn (CAIRN_EMBEDDINGS_URL): ends in /v1. */
  url: string;
  requests: EmbeddingsRequest[];
  /** Words (or phrases) that mean the same: each maps to the group's first. */
  alike(groups: readonly (readonly string[])[]): void;
  /** Each answer waits this long first. */
  delayMs: number;
  /** Answer every request with this status (and an error body) while set. */
  failWith: number | null;
  /** Answer vectors of this length whatever was asked (a model that ignores `dimensions`). */
  forceDimensions: number | null;
  /** Only this key is accepted when set (401 otherwise). */
  requireKey: string | null;
  vector(text: string, dimensions?: number): number[];
  close(): Promise<void>;
}

export const DEFAULT_DIMENSIONS = 64;

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const same = new Map<string, string>();
  const words = (text: string): string[] => {
    let t = ` ${text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, " ").replace(/\s+/g, " ")} `;
    // Phrases first (longest first), then single words, to the group's first member.
    for (const [from, to] of [...same].sort((a, b) => b[0].length - a[0].length)) t = t.split(` ${from} `).join(` ${to.replace(/ /g, "_")} `);
    return t.trim().split(" ").filter(Boolean);
  };
  const vector = (text: string, dimensions = DEFAULT_DIMENSIONS): number[] => {
    const v = new Array<number>(dimensions).fill(0);
    for (const w of words(text)) {
      const h = createHash("sha256").update(w).digest();
      v[h.readUInt32BE(0) % dimensions]! += h[4]! & 1 ? 1 : -1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  };
  const fake: FakeEmbeddings = {
    url: "",
    requests: [],
    delayMs: 0,
    failWith: null,
    forceDimensions: null,
    requireKey: null,
    alike(groups) {
      for (const g of groups) {
        // A phrase that heads its group is joined too ("web app" -> web_app), as its members become.
        if (g[0]!.includes(" ")) same.set(g[0]!.toLowerCase(), g[0]!.toLowerCase());
        for (const w of g.slice(1)) same.set(w.toLowerCase(), g[0]!.toLowerCase());
      }
    },
    vector,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/v1/embeddings") return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
    const body = JSON.parse(await readBody(req)) as { model: string; input: string | string[]; dimensions?: number };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    const authorization = req.headers.authorization ?? null;
    fake.requests.push({ model: body.model, input, ...(body.dimensions ? { dimensions: body.dimensions } : {}), authorization });
    if (fake.delayMs > 0) await new Promise((r) => setTimeout(r, fake.delayMs));
    if (fake.requireKey !== null && authorization !== `Bearer ${fake.requireKey}`) return send(401, { error: { message: "invalid api key" } });
    if (fake.failWith !== null) return send(fake.failWith, { error: { message: "the fake was told to fail" } });
    const dims = fake.forceDimensions ?? body.dimensions ?? DEFAULT_DIMENSIONS;
    send(200, { object: "list", model: body.model, data: input.map((t, index) => ({ object: "embedding", index, embedding: vector(t, dims) })), usage: { prompt_tokens: input.join(" ").length, total_tokens: input.join(" ").length } });
  });
  const port = await listenLocal(server);
  fake.url = `http://127.0.0.1:${port}/v1`;
  return fake;
}
