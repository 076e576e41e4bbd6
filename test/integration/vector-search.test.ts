/**
 * The embeddings provider's store and worker against a real database and the fake embeddings
 * server: the backfill embeds what is stored, a search finds by meaning what shares no word with
 * its query, within the asker's scope only, and the stored vectors follow their texts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { Embedder } from "../../src/providers/embeddings/embedder.ts";
import { VectorStore } from "../../src/providers/embeddings/vector-store.ts";
import { Metrics } from "../../src/ops/metrics.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings.ts";
import { captureLog } from "../support/embeddings.ts";
import { forEachDatabase, inboundFor, uniqueId, type Database, type PlaceOptions } from "../support/db.ts";

let fake: FakeEmbeddings;
beforeAll(async () => {
  fake = await startFakeEmbeddings();
  fake.alike([["ship", "deploy"], ["web app", "frontend"]]);
});
afterAll(() => fake.close());

forEachDatabase("vector search", (getDb) => {
  async function say(db: Database, opts: PlaceOptions, text: string): Promise<{ id: number; scope: Scope }> {
    const inbound = inboundFor(opts, text, uniqueId("m"));
    const h = new HistoryStore(db);
    const resolved = await h.resolve(inbound);
    const message = await h.recordInbound(resolved, inbound);
    return { id: message!.id, scope: scopeOf(resolved) };
  }
  function embedder(db: Database): Embedder {
    return new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 256, timeoutMs: 2000 }, store: new VectorStore(db), metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 8 });
  }
  async function drain(e: Embedder): Promise<void> {
    for (let i = 0; i < 200 && (await e.step()) === "worked"; i++);
  }

  it("a paraphrase with no shared word is found through the vector path, and only by someone who may see it", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const said = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false, name: "Ada" }, "to deploy the frontend run zebractl release");
    const secret = await say(db, { workspace: ws, user: "UA", channel: "DA", isDm: true, name: "Ada" }, "deploy frontend privately with zebractl");
    const other = await say(db, { workspace: ws, user: "UB", channel: "C2", isDm: false, name: "Bo" }, "lunch is at noon");
    const e = embedder(db);
    await drain(e);
    const q = await e.queryVector("how do we ship the web app?", 2000);
    expect(q).not.toBeNull();
    const words = await searchMessages(db, other.scope, "how do we ship the web app?", { limit: 5 });
    expect(words.map((h) => h.messageId)).not.toContain(said.id);
    const hybrid = await searchMessages(db, other.scope, "how do we ship the web app?", { limit: 5, vector: q! });
    expect(hybrid.map((h) => h.messageId)).toContain(said.id);
    // Bo never sees Ada's DM; Ada does.
    expect(hybrid.map((h) => h.messageId)).not.toContain(secret.id);
    const own = await searchMessages(db, secret.scope, "how do we ship the web app?", { limit: 5, vector: q! });
    expect(own.map((h) => h.messageId)).toContain(secret.id);
    // session_search's filters hold on the vector path too: found by meaning only inside them.
    const narrowed = async (filter: Parameters<typeof searchMessages>[3]["filter"]) =>
      (await searchMessages(db, secret.scope, "how do we ship the web app?", { limit: 5, vector: q!, filter })).map((h) => h.messageId);
    expect(await narrowed({ channel: "dm" })).toEqual([secret.id]);
    expect(await narrowed({ before: new Date(Date.now() - 86_400_000) })).toEqual([]);
    expect((await narrowed({ authorIds: [other.scope.personId] })).filter((id) => id !== other.id)).toEqual([]);
    expect(await narrowed({ after: new Date(Date.now() - 86_400_000) })).toEqual(expect.arrayContaining([said.id, secret.id]));
  });

  it("the backlog drains; an entry whose text changed is embedded again, and only its current vector is used", async () => {
    const db = getDb();
    const store = new VectorStore(db);
    const ws = uniqueId("ws");
    let scope: Scope | null = null;
    for (let i = 0; i < 5; i++) scope = (await say(db, { workspace: ws, user: "UC", channel: "C9", isDm: false }, `note number ${i} about the zebra rollout`)).scope;
    const entry = await db.prisma.memoryEntry.create({ data: { workspaceId: scope!.workspaceId, scope: "team", text: "Releases go out on Tuesdays.", source: "tool", kind: "lesson" } });
    const e = embedder(db);
    const before = await store.backlog("fake-embed@256");
    expect(before.messages).toBeGreaterThanOrEqual(5);
    expect(before.entries).toBeGreaterThanOrEqual(1);
    await drain(e);
    expect(await store.backlog("fake-embed@256")).toEqual({ messages: 0, entries: 0 });
    const first = await store.entryVectors(scope!, "fake-embed@256", [entry.id]);
    expect(first.get(entry.id)?.length).toBe(256);

    await db.prisma.memoryEntry.update({ where: { id: entry.id }, data: { text: "Releases go out on Thursdays, after the freeze." } });
    // The old vector is of words the entry no longer says: not used, and the entry is pending again.
    expect((await store.entryVectors(scope!, "fake-embed@256", [entry.id])).size).toBe(0);
    expect((await store.pendingEntries("fake-embed@256", 100)).map((p) => p.id)).toContain(entry.id);
    await drain(e);
    const again = await store.entryVectors(scope!, "fake-embed@256", [entry.id]);
    expect(Buffer.from(again.get(entry.id)!).equals(Buffer.from(first.get(entry.id)!))).toBe(false);
    // Another workspace's asker gets none of its vectors, even by id.
    const stranger = (await say(db, { workspace: uniqueId("ws"), user: "UZ", channel: "C1", isDm: false }, "hello")).scope;
    expect((await store.entryVectors(stranger, "fake-embed@256", [entry.id])).size).toBe(0);
  });

  it("a query path failing or late rests after three in a row: later queries are not sent, and are counted skipped", async () => {
    const db = getDb();
    const metrics = new Metrics({ processMetrics: false });
    const e = new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 256, timeoutMs: 2000 }, store: new VectorStore(db), metrics, log: silentLogger });
    fake.failWith = 503;
    try {
      for (const q of ["one", "two", "three"]) expect(await e.queryVector(q, 1000)).toBeNull();
      const sent = fake.requests.length;
      expect(await e.queryVector("four", 1000)).toBeNull();
      expect(fake.requests.length).toBe(sent);
      const text = await metrics.expose();
      expect(text).toMatch(/cairn_embedding_calls_total\{purpose="search",result="failed"\} 3/);
      expect(text).toMatch(/cairn_embedding_calls_total\{purpose="search",result="skipped"\} 1/);
    } finally {
      fake.failWith = null;
    }
  });

  it("a new model or length is a new space: searched as it fills, the old space's vectors deleted once it is complete", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const said = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false }, "to deploy the frontend run zebractl release");
    const other = await say(db, { workspace: ws, user: "UB", channel: "C2", isDm: false }, "lunch is at noon");
    const old = embedder(db);
    await drain(old);
    const count = (space: string) => db.prisma.messageVector.count({ where: { messageId: said.id, space } });
    expect(await count("fake-embed@256")).toBe(1);

    const next = new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 512, timeoutMs: 2000 }, store: new VectorStore(db), metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 8 });
    const q = await next.queryVector("how do we ship the web app?", 2000);
    expect(q!.space).toBe("fake-embed@512");
    // Nothing in the new space yet: the search goes on (words alone find nothing here), no error.
    expect((await searchMessages(db, other.scope, "how do we ship the web app?", { limit: 5, vector: q! })).map((h) => h.messageId)).not.toContain(said.id);
    expect(await next.step()).toBe("worked");
    await drain(next);
    expect((await searchMessages(db, other.scope, "how do we ship the web app?", { limit: 5, vector: q! })).map((h) => h.messageId)).toContain(said.id);
    expect(await count("fake-embed@512")).toBe(1);
    expect(await count("fake-embed@256")).toBe(0);
    expect(await db.prisma.messageVector.count({ where: { space: { not: "fake-embed@512" } } })).toBe(0);
  });

  it("backfills newest first, and a message arriving meanwhile is embedded before the rest of the backlog", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false }, `older note ${i} on the rollout`)).id);
    const e = new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 128, timeoutMs: 2000 }, store: new VectorStore(db), metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 8 });
    const embedded = async () => (await db.prisma.messageVector.findMany({ where: { space: "fake-embed@128", messageId: { in: ids } }, select: { messageId: true } })).map((v) => v.messageId).sort((a, b) => a - b);
    expect(await e.step()).toBe("worked");
    expect(await embedded()).toEqual(ids.slice(-8));
    const late = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false }, "a new note arrives");
    ids.push(late.id);
    expect(await e.step()).toBe("worked");
    expect(await embedded()).toEqual([...ids.slice(12, 20), late.id]);
    await drain(e);
    expect(await embedded()).toEqual(ids);
  });

  it("says at start how this database searches vectors: sqlite-vec in SQLite's statement, an exact scan in cairn on PostgreSQL", async () => {
    const db = getDb();
    const captured = captureLog();
    const e = new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 256, timeoutMs: 2000 }, store: new VectorStore(db), metrics: new Metrics({ processMetrics: false }), log: captured.log, idleMs: 60_000 });
    e.start();
    await e.stop();
    const started = captured.lines().find((l) => String(l.msg).startsWith("embeddings on"));
    expect(started).toMatchObject({ model: "fake-embed", dimensions: 256, vectorSearch: db.provider === "sqlite" ? "sqlite-vec" : "exact scan in cairn" });
  });

  it("a text the endpoint refuses as a request (400) is kept as refused: not asked again, never compared", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const refused = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false }, "a text the endpoint will not take");
    const e = new Embedder({ settings: { url: fake.url, model: "fake-embed", dimensions: 96, timeoutMs: 2000 }, store: new VectorStore(db), metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 4 });
    fake.failWith = 400;
    try {
      // The batch is refused, then each text alone: each kept with an empty vector.
      for (let i = 0; i < 500 && (await e.step()) === "worked"; i++);
    } finally {
      fake.failWith = null;
    }
    const row = await db.prisma.messageVector.findUniqueOrThrow({ where: { messageId_space: { messageId: refused.id, space: "fake-embed@96" } } });
    expect(row.vector.length).toBe(0);
    const asked = fake.requests.length;
    expect(await e.step()).toBe("idle");
    expect(fake.requests.length).toBe(asked);
    const q = await e.queryVector("a text the endpoint will not take", 2000);
    const hits = await searchMessages(db, refused.scope, "zzz-no-such-word", { limit: 5, vector: q! });
    expect(hits.map((h) => h.messageId)).not.toContain(refused.id);
  });
});
