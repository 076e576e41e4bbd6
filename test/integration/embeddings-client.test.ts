/**
 * The embeddings client (src/providers/embeddings/client.ts) against the fake OpenAI-compatible
 * server on loopback: vectors come back in the texts' order, paraphrases the fake maps together
 * are nearer than unrelated text, and every failure is an EmbeddingsError naming its reason.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { embed, EmbeddingsError, type EmbeddingsFailure } from "../../src/providers/embeddings/client.ts";
import { DEFAULT_DIMENSIONS, startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings.ts";

let fake: FakeEmbeddings;
const settings = () => ({ url: fake.url, model: "m", timeoutMs: 2_000 });
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

async function failure(run: () => Promise<unknown>): Promise<EmbeddingsFailure> {
  try {
    await run();
  } catch (err) {
    if (err instanceof EmbeddingsError) return err.reason;
    throw err;
  }
  throw new Error("it did not fail");
}

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  fake.alike([["deploy", "ship"], ["frontend", "web app"]]);
});
afterAll(() => fake.close());
beforeEach(() => {
  Object.assign(fake, { delayMs: 0, failWith: null, forceDimensions: null, requireKey: null });
});

it("returns one vector per text, in order, and a paraphrase nearer than unrelated text", async () => {
  const [a, b, c] = await embed(settings(), ["how do we ship the web app?", "deploy the frontend with zebractl", "lunch on friday"]);
  expect([a, b, c].map((v) => v!.length)).toEqual([DEFAULT_DIMENSIONS, DEFAULT_DIMENSIONS, DEFAULT_DIMENSIONS]);
  expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.2);
  expect(Array.from(a!)).toEqual(fake.vector("how do we ship the web app?").map((x) => Math.fround(x)));
  expect(await embed(settings(), [])).toEqual([]);
});

it("asks for the dimensions set and refuses a vector of another length", async () => {
  expect((await embed({ ...settings(), dimensions: 32 }, ["x"]))[0]!.length).toBe(32);
  expect(fake.requests.at(-1)!.dimensions).toBe(32);
  fake.forceDimensions = 48;
  expect(await failure(() => embed({ ...settings(), dimensions: 32 }, ["x"]))).toBe("dimension");
});

it("names each failure: a refused key, an error status, a wrong URL, a timeout, nothing listening", async () => {
  fake.requireKey = "good";
  expect(await failure(() => embed({ ...settings(), apiKey: "bad" }, ["x"]))).toBe("refused");
  expect((await embed({ ...settings(), apiKey: "good" }, ["x"])).length).toBe(1);
  fake.requireKey = null;
  fake.failWith = 503;
  expect(await failure(() => embed(settings(), ["x"]))).toBe("http");
  fake.failWith = null;
  expect(await failure(() => embed({ ...settings(), url: fake.url.replace(/\/v1$/, "") }, ["x"]))).toBe("http");
  fake.delayMs = 500;
  expect(await failure(() => embed({ ...settings(), timeoutMs: 50 }, ["x"]))).toBe("timeout");
  fake.delayMs = 0;
  expect(await failure(() => embed({ ...settings(), url: "http://127.0.0.1:1/v1" }, ["x"]))).toBe("unreachable");
});
