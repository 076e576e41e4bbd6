/**
 * What stored vectors cost at scale (issue 30): search with and without a query vector, the bytes a
 * message's vector takes, and the backfill's texts per second.
 *
 * BENCH_VECTORS_MESSAGES (default 1,000,000) history messages are seeded as the cost benchmark seeds
 * them, in BENCH_VECTORS_WORKSPACES (default 10) workspaces of 10 channels, all readable by the
 * asker, so a search's vector arm compares every vector of one workspace (messages / workspaces).
 * The newest BENCH_VECTORS_BACKFILL (default 20,000) are embedded through the real Embedder against
 * the fake embeddings server (batch 64, no rate limit): the backfill's throughput, HTTP and one
 * INSERT per vector included. The rest get their vectors in bulk, made by the fake's own function
 * and quantised as cairn quantises (no HTTP). The fake's vectors hash words (test/fakes/embeddings.ts):
 * the figures are of cost (bytes, scans, fusion), not of what a real model would find.
 *
 * Search: the same 3-word queries (BENCH_VECTORS_QUERIES, default 100) by words alone, then by words
 * and with the query's vector alternating per query, in the same run; and the vector arm alone
 * (nearestMessages), to show where a hybrid search's time goes. The vector statement's plan is printed.
 */
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { openBenchDatabase } from "./lib/db.ts";
import { rng, seed, seedUser, seedWorkspace, type SeedPlan } from "./lib/seed.ts";
import { median, now, percentile, round, table } from "./lib/report.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../test/fakes/embeddings.ts";
import { searchMessages } from "../src/history/store/search.ts";
import { nearestMessages, type QueryVector } from "../src/history/store/search-vectors.ts";
import { HistoryStore, scopeOfWorkspace } from "../src/history/store/store.ts";
import { placeScope } from "../src/db/scopes.ts";
import { sqlitePath, type Database } from "../src/db/client.ts";
import { quantize, spaceKey } from "../src/ground/vector.ts";
import { Embedder } from "../src/providers/embeddings/embedder.ts";
import { VectorStore } from "../src/providers/embeddings/vector-store.ts";
import { Metrics } from "../src/ops/metrics.ts";
import { silentLogger } from "../src/ground/log.ts";
import type { Scope } from "../src/ground/types.ts";
import type { BenchOutcome } from "./run.ts";

const DIMENSIONS = 256;
const MODEL = "fake-embed";
const SPACE = spaceKey({ model: MODEL, dimensions: DIMENSIONS });

const QUERY_WORDS = "deploy release staging rollback migration database latency cache incident oncall billing invoice onboarding login webhook roadmap launch dashboard".split(" ");

interface Times {
  p50: number;
  p95: number;
}

const times = (ms: readonly number[]): Times => ({ p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)) });
const seconds = (t0: number): number => round((now() - t0) / 1000, 1);

/** The newest `count` messages embedded through the Embedder (batch 64) against the fake server. */
async function backfill(db: Database, fake: FakeEmbeddings, count: number): Promise<{ texts: number; seconds: number; perSecond: number }> {
  const store = new VectorStore(db);
  const embedder = new Embedder({ settings: { url: fake.url, model: MODEL, dimensions: DIMENSIONS, timeoutMs: 30_000 }, store, metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 64 });
  const before = fake.requests.length;
  const t0 = now();
  let texts = 0;
  while (texts < count) {
    const step = await embedder.step();
    if (step !== "worked") throw new Error(`backfill step: ${step}`);
    texts = fake.requests.slice(before).reduce((n, r) => n + r.input.length, 0);
  }
  const s = (now() - t0) / 1000;
  fake.requests.length = 0;
  return { texts, seconds: round(s, 1), perSecond: round(texts / s, 0) };
}

/** Vectors for every message still without one, straight into the table, in batches. */
async function bulkVectors(provider: "sqlite" | "postgresql", url: string, fake: FakeEmbeddings): Promise<number> {
  const vec = (text: string) => Buffer.from(quantize(fake.vector(text, DIMENSIONS)));
  const at = new Date("2026-01-01T00:00:00Z");
  let n = 0;
  if (provider === "sqlite") {
    const db = new BetterSqlite3(sqlitePath(url));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    const read = db.prepare(`SELECT id, workspaceId, text FROM "Message" WHERE id > ? ORDER BY id LIMIT 20000`).raw(true);
    const insert = db.prepare(`INSERT OR IGNORE INTO "MessageVector" (messageId, space, workspaceId, vector, createdAt) VALUES (?, ?, ?, ?, ?)`);
    let above = 0;
    for (;;) {
      const rows = read.all(above) as [number, string, string][];
      if (rows.length === 0) break;
      db.transaction(() => {
        for (const [id, ws, text] of rows) insert.run(id, SPACE, ws, vec(text), at.toISOString().replace("Z", "+00:00"));
      })();
      n += rows.length;
      above = rows[rows.length - 1]![0];
    }
    db.exec("ANALYZE");
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    return n;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let above = 0;
    for (;;) {
      const { rows } = await client.query<{ id: number; workspaceId: string; text: string }>(`SELECT id, "workspaceId", text FROM "Message" WHERE id > $1 ORDER BY id LIMIT 10000`, [above]);
      if (rows.length === 0) break;
      await client.query(
        `INSERT INTO "MessageVector" ("messageId", space, "workspaceId", vector, "createdAt")
         SELECT * FROM unnest($1::int4[], $2::text[], $3::text[], $4::bytea[], $5::timestamp(3)[]) ON CONFLICT DO NOTHING`,
        [rows.map((r) => r.id), rows.map(() => SPACE), rows.map((r) => r.workspaceId), rows.map((r) => vec(r.text)), rows.map(() => at)],
      );
      n += rows.length;
      above = rows[rows.length - 1]!.id;
    }
    await client.query(`ANALYZE "MessageVector"`);
  } finally {
    await client.end();
  }
  return n;
}

/** Bytes of MessageVector (table and its indexes) and its rows. */
async function storage(provider: "sqlite" | "postgresql", url: string): Promise<{ bytes: number; rows: number; tableBytes: number }> {
  if (provider === "sqlite") {
    const db = new BetterSqlite3(sqlitePath(url), { readonly: true });
    try {
      const of = (names: string[]) => Number((db.prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (${names.map(() => "?").join(", ")})`).pluck().get(...names) as number) ?? 0);
      const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE tbl_name = 'MessageVector' AND type = 'index'`).pluck().all() as string[]);
      const rows = Number(db.prepare(`SELECT count(*) FROM "MessageVector"`).pluck().get());
      return { bytes: of(["MessageVector", ...indexes]), tableBytes: of(["MessageVector"]), rows };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ total: string; heap: string; n: string }>(
      `SELECT pg_total_relation_size('"MessageVector"') AS total, pg_table_size('"MessageVector"') AS heap, (SELECT count(*) FROM "MessageVector") AS n`,
    );
    return { bytes: Number(rows[0]!.total), tableBytes: Number(rows[0]!.heap), rows: Number(rows[0]!.n) };
  } finally {
    await client.end();
  }
}

/** The plan of the vector arm's statement (as search-vectors.ts sends it), captured from the driver. */
async function vectorPlan(provider: "sqlite" | "postgresql", url: string, db: Database, ctx: Parameters<typeof nearestMessages>[0], q: QueryVector): Promise<string> {
  // Capture the statement and its parameters as the search sends them, then ask for its plan.
  const direct = db.direct as unknown as { rows: (sql: string, params: unknown[]) => Promise<unknown[][]> };
  const original = direct.rows.bind(direct);
  let seen: { sql: string; params: unknown[] } | null = null;
  direct.rows = async (sql, params) => {
    seen ??= { sql, params };
    return original(sql, params);
  };
  try {
    await nearestMessages(ctx, q, 20);
  } finally {
    direct.rows = original;
  }
  if (!seen) return "(no statement seen)";
  const { sql, params } = seen as { sql: string; params: unknown[] };
  if (provider === "sqlite") {
    const plan = await original(`EXPLAIN QUERY PLAN ${sql}`, params);
    return plan.map((r) => `  ${r.join(" | ")}`).join("\n");
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params.map((p) => (p instanceof Uint8Array ? Buffer.from(p) : p)));
    return rows.map((r) => `  ${r["QUERY PLAN"]}`).join("\n");
  } finally {
    await client.end();
  }
}

export async function run(): Promise<BenchOutcome> {
  const total = Number(process.env.BENCH_VECTORS_MESSAGES ?? 1_000_000);
  const workspaces = Number(process.env.BENCH_VECTORS_WORKSPACES ?? 10);
  const backfillCount = Math.min(total, Number(process.env.BENCH_VECTORS_BACKFILL ?? 20_000));
  const queryCount = Number(process.env.BENCH_VECTORS_QUERIES ?? 100);
  const bench = await openBenchDatabase("vectors");
  const fake = await startFakeEmbeddings();
  try {
    const db = bench.database;
    const plan: SeedPlan = { workspaces, messages: total, memoryEntries: 0, skills: 0, peoplePerWorkspace: 20, channelsPerWorkspace: 10 };
    let t0 = now();
    let shown = 0;
    await seed(bench.provider, bench.url, plan, (n) => {
      if (n - shown >= 250_000) {
        shown = n;
        process.stderr.write(`  seeded ${n} messages (${seconds(t0)} s)\n`);
      }
    });
    const seedSeconds = seconds(t0);

    const filled = await backfill(db, fake, backfillCount);
    process.stderr.write(`  backfill: ${filled.texts} texts in ${filled.seconds} s\n`);
    t0 = now();
    const bulk = await bulkVectors(bench.provider, bench.url, fake);
    const bulkSeconds = seconds(t0);
    process.stderr.write(`  bulk vectors: ${bulk} rows read in ${bulkSeconds} s\n`);
    const size = await storage(bench.provider, bench.url);

    const history = new HistoryStore(db);
    const ws = await history.workspaceOf("slack", seedWorkspace(0));
    const person = await history.person(scopeOfWorkspace(ws), { externalId: seedUser(0) });
    const scope: Scope = placeScope(person, { id: "bench", workspaceId: ws.id, channelId: "bench", isDm: true });
    const r = rng(30);
    const pick = () => QUERY_WORDS[Math.floor(r() * QUERY_WORDS.length)]!;
    const queries = Array.from({ length: queryCount }, () => `${pick()} ${pick()} ${pick()}`);
    const vectorOf = (text: string): QueryVector => ({ space: SPACE, vector: quantize(fake.vector(text, DIMENSIONS)) });
    const ctx = { database: db, scope, exclude: "", readable: "[]", filter: {} };

    // Warm-up: statements prepared, pages cached.
    for (const q of queries.slice(0, 5)) {
      await searchMessages(db, scope, q, { limit: 10 });
      await searchMessages(db, scope, q, { limit: 10, vector: vectorOf(q) });
    }
    // Words alone first, before any vector is read: the pages a word search needs, not yet pushed
    // out of the cache by vector scans (then the same queries alternating, as a mixed load runs).
    const wordsFirst: number[] = [];
    for (const q of queries) {
      const s = now();
      await searchMessages(db, scope, q, { limit: 10 });
      wordsFirst.push(now() - s);
    }
    const words: number[] = [];
    const hybrid: number[] = [];
    const arm: number[] = [];
    let vectorHits = 0;
    t0 = now();
    for (const q of queries) {
      const v = vectorOf(q);
      let s = now();
      await searchMessages(db, scope, q, { limit: 10 });
      words.push(now() - s);
      s = now();
      await searchMessages(db, scope, q, { limit: 10, vector: v });
      hybrid.push(now() - s);
      s = now();
      vectorHits += (await nearestMessages(ctx, v, 20)).length;
      arm.push(now() - s);
    }
    const searchSeconds = seconds(t0);
    const explain = await vectorPlan(bench.provider, bench.url, db, ctx, vectorOf(queries[0]!));

    const w0 = times(wordsFirst);
    const w = times(words);
    const h = times(hybrid);
    const a = times(arm);
    const perWorkspace = Math.round(total / workspaces);
    const rows: (string | number)[][] = [
      [`search by words, before any vector search`, `${w0.p50} / ${w0.p95} ms`, ""],
      [`search by words (${queryCount} queries, alternating with the two below)`, `${w.p50} / ${w.p95} ms`, "1.0x"],
      [`search with a vector (same queries)`, `${h.p50} / ${h.p95} ms`, `${round(h.p50 / w.p50, 2)}x p50, ${round(h.p95 / w.p95, 2)}x p95`],
      [`vector arm alone (nearestMessages, ${perWorkspace} vectors scanned)`, `${a.p50} / ${a.p95} ms`, `${round(vectorHits / queryCount, 1)} hits a query`],
      [`storage, MessageVector (table + indexes)`, `${round(size.bytes / size.rows, 1)} B/message`, `table alone ${round(size.tableBytes / size.rows, 1)} B; ${round(size.bytes / 2 ** 20, 0)} MiB for ${size.rows} rows`],
      [`backfill through the Embedder (batch 64, fake server)`, `${filled.perSecond} texts/s`, `${filled.texts} texts in ${filled.seconds} s`],
    ];
    const text = [
      `stored vectors on ${bench.provider}: ${total.toLocaleString("en")} messages in ${workspaces} workspaces (${perWorkspace.toLocaleString("en")} readable by the asker), ${DIMENSIONS} dimensions int8`,
      `fake embeddings: vectors are hashed words (no semantic model); these are costs, not recall`,
      table(["measure", "p50 / p95 or figure", "ratio / beside it"], rows),
      `seeding ${seedSeconds} s, backfill ${filled.seconds} s, bulk vectors ${bulkSeconds} s, search ${searchSeconds} s`,
      `plan of the vector statement:`,
      explain,
    ].join("\n");
    return {
      name: "vectors",
      table: text,
      result: {
        provider: bench.provider,
        messages: total,
        workspaces,
        vectorsPerWorkspace: perWorkspace,
        dimensions: DIMENSIONS,
        queries: queryCount,
        search: { wordsBeforeVectors: w0, words: w, hybrid: h, vectorArm: a, ratio: { p50: round(h.p50 / w.p50, 2), p95: round(h.p95 / w.p95, 2) }, medianMs: { words: round(median(words)), hybrid: round(median(hybrid)) } },
        storage: { ...size, bytesPerMessage: round(size.bytes / size.rows, 1), tableBytesPerMessage: round(size.tableBytes / size.rows, 1) },
        backfill: filled,
        seconds: { seed: seedSeconds, backfill: filled.seconds, bulkVectors: bulkSeconds, search: searchSeconds },
        plan: explain,
      },
    };
  } finally {
    await fake.close();
    await bench.close();
  }
}
