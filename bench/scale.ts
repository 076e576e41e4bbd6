/**
 * Search at scale (issue 29, item 5), PostgreSQL only: messages seeded in bulk in steps
 * (BENCH_SCALE_STEPS, default "1000000,10000000"), and after each step the database's size, its
 * indexes' sizes, the production search's (searchMessages) latency from readers' places, and a
 * turn's core cost (as bench/cost.ts measures it) in the same database.
 *
 * Loading: the secondary indexes of "Message" (its GIN indexes among them) are dropped before each
 * step's rows go in and built again after, timed apart; then VACUUM ANALYZE, as autovacuum would
 * do in time, so it does not run during the measurements. Rows: bench/lib/bulk-seed.ts.
 *
 * Search: readers in the largest workspace (5,000 people), each searching from their DM. A reader's
 * first search counts the workspace's figures (stats, kept 30 s per reader): timed apart as
 * "first". Then BENCH_SCALE_QUERIES (default 240) queries after a warm-up of 40: a third rare
 * words, a third one or two common words, a third questions of 2-3 words of mixed frequency.
 */
import pg from "pg";
import { openBenchDatabase, type BenchDatabase } from "./lib/db.ts";
import { benchCore, channelMessage, replyText } from "./lib/core.ts";
import { fakeModel } from "./lib/model.ts";
import { createIndexes, dropIndexes, messageIndexes, seedMessages, seedShape, type ScaleShape } from "./lib/bulk-seed.ts";
import { percentile, now, round, table } from "./lib/report.ts";
import { rng, seedChannel, seedUser, seedWorkspace } from "./lib/seed.ts";
import { vocabulary, zipfRank } from "./lib/zipf-words.ts";
import { searchMessages } from "../src/history/store/search.ts";
import { placeScope } from "../src/db/scopes.ts";
import type { Scope } from "../src/ground/types.ts";
import type { Database } from "../src/db/client.ts";
import type { DirectSql } from "../src/db/direct.ts";
import type { BenchOutcome } from "./run.ts";

const SHAPE: ScaleShape = { workspaces: [5000, 2000, 1000, 500], vocabulary: 30_000 };
const READERS = 10;
const WARMUP = 40;

type Kind = "rare" | "common" | "question";
interface Query {
  kind: Kind;
  text: string;
}

/** Fixed queries: the same at every step. */
function queries(count: number): Query[] {
  const words = vocabulary(SHAPE.vocabulary);
  const r = rng(2929);
  const pick = (lo: number, hi: number) => words[lo + Math.floor(r() * (hi - lo))]!;
  const starts = ["what did we decide about", "who owns the", "why is the", "how do I fix the", "when did we change the"];
  const out: Query[] = [];
  for (let i = 0; i < count; i++) {
    const kind: Kind = (["rare", "common", "question"] as const)[i % 3]!;
    if (kind === "rare") out.push({ kind, text: pick(3000, words.length) });
    else if (kind === "common") out.push({ kind, text: r() < 0.5 ? pick(0, 30) : `${pick(0, 30)} ${pick(0, 30)}` });
    else {
      // Words as chat uses them (Zipf), at least one beyond the 30 most common.
      const n = 2 + Math.floor(r() * 2);
      const ws = [pick(30, 3000), ...Array.from({ length: n - 1 }, () => words[zipfRank(r, words.length)]!)];
      out.push({ kind, text: `${starts[i % starts.length]} ${ws.join(" ")}?` });
    }
  }
  return out;
}

const readerScope = (p: number): Scope => placeScope({ id: `sp0_${p}`, workspaceId: "sw0" }, { id: `sd0_${p}`, workspaceId: "sw0", channelId: `D${p}`, isDm: true });

interface Sizes {
  databaseMB: number;
  messageTotalMB: number;
  messageHeapMB: number;
  messageIndexesMB: number;
  indexesMB: Record<string, number>;
  chatSessionTotalMB: number;
}

async function sizes(url: string): Promise<Sizes> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const mb = (v: unknown) => round(Number(v) / 1024 / 1024, 1);
    const t = (
      await c.query(
        `SELECT pg_database_size(current_database()) AS db, pg_total_relation_size('"Message"') AS total, pg_table_size('"Message"') AS heap,
                pg_indexes_size('"Message"') AS idx, pg_total_relation_size('"ChatSession"') AS sessions`,
      )
    ).rows[0]!;
    const idx = await c.query<{ name: string; size: string }>(
      `SELECT indexrelname AS name, pg_relation_size(indexrelid) AS size FROM pg_stat_user_indexes WHERE relname = 'Message' ORDER BY 2 DESC`,
    );
    return {
      databaseMB: mb(t.db),
      messageTotalMB: mb(t.total),
      messageHeapMB: mb(t.heap),
      messageIndexesMB: mb(t.idx),
      indexesMB: Object.fromEntries(idx.rows.map((r) => [r.name, mb(r.size)])),
      chatSessionTotalMB: mb(t.sessions),
    };
  } finally {
    await c.end();
  }
}

/** Message blocks PostgreSQL found in shared_buffers, and read from the OS, since the last call. */
async function blockReader(url: string): Promise<{ delta: () => Promise<{ hit: number; read: number }>; close: () => Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const sample = async () => {
    const r = (
      await c.query(
        `SELECT coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0) + coalesce(toast_blks_hit, 0) AS hit,
                coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0) + coalesce(toast_blks_read, 0) AS read
           FROM pg_statio_user_tables WHERE relname = 'Message'`,
      )
    ).rows[0]!;
    return { hit: Number(r.hit), read: Number(r.read) };
  };
  let last = await sample();
  const delta = async () => {
    // Statistics reach the view when a backend reports them (at most once a second).
    await new Promise((res) => setTimeout(res, 1100));
    const s = await sample();
    const d = { hit: s.hit - last.hit, read: s.read - last.read };
    last = s;
    return d;
  };
  return { delta, close: () => c.end() };
}

interface Latency {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}
const latency = (ms: number[]): Latency => ({ p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), p99: round(percentile(ms, 99)), max: round(Math.max(...ms)) });

/** The search's statements by what they do, told apart by their text (search-postgres.ts). */
function statementKind(sql: string): string {
  if (sql.includes("count(*) AS docs")) return "stats";
  if (sql.startsWith("SELECT t.i")) return "df";
  if (sql.startsWith("WITH a AS")) return "neighbours";
  if (sql.includes("to_tsquery('english'")) return sql.includes("ts_rank_cd") ? "lexical ranked" : "lexical";
  return "other";
}

/**
 * The database with its direct path timed: milliseconds spent in each kind of statement (summed;
 * a search runs some at once), and whether the last search recounted the workspace's figures.
 */
function timed(db: Database) {
  const spent: Record<string, number> = {};
  let recounted = false;
  const timedBy = (run: DirectSql["scan"]): DirectSql["scan"] => async (sql, params, opts) => {
    const kind = statementKind(sql);
    if (kind === "stats") recounted = true;
    const t0 = now();
    try {
      return await run(sql, params, opts);
    } finally {
      spent[kind] = (spent[kind] ?? 0) + now() - t0;
    }
  };
  const direct: DirectSql = {
    rows: timedBy((sql, params) => db.direct.rows(sql, params)),
    scan: timedBy((sql, params, opts) => db.direct.scan(sql, params, opts)),
    exclusive: (key, sql, params) => db.direct.exclusive(key, sql, params),
    each: (sql, lists) => db.direct.each(sql, lists),
    chain: (statements) => db.direct.chain(statements),
  };
  return {
    database: { ...db, direct },
    spent,
    /** Whether a stats statement ran since the last call. */
    recounted: () => {
      const r = recounted;
      recounted = false;
      return r;
    },
  };
}

async function searchStep(bench: BenchDatabase, qs: Query[]) {
  const t = timed(bench.database);
  const db = t.database;
  const blocks = await blockReader(bench.url);
  try {
    const warm = queries(WARMUP + qs.length).slice(qs.length);
    // Warm-up from a reader not measured: connections opened, statements planned, pages cached.
    for (const q of warm) await searchMessages(db, readerScope(READERS), q.text, { limit: 10 });
    await blocks.delta();
    for (const k of Object.keys(t.spent)) delete t.spent[k];
    const first: number[] = [];
    const all: number[] = [];
    const warmOnly: number[] = [];
    let recounts = 0;
    const byKind: Record<Kind, number[]> = { rare: [], common: [], question: [] };
    let hits = 0;
    const each = Math.ceil(qs.length / READERS);
    // Reader by reader: the first search counts the workspace's figures, the rest reuse them
    // (kept 30 s, so a reader's queries run within that while each takes under a second).
    for (let p = 0; p < READERS; p++) {
      const scope = readerScope(p);
      const t0 = now();
      await searchMessages(db, scope, "deploy", { limit: 10 });
      first.push(now() - t0);
      t.recounted();
      for (const q of qs.slice(p * each, (p + 1) * each)) {
        const t1 = now();
        hits += (await searchMessages(db, scope, q.text, { limit: 10 })).length;
        const ms = now() - t1;
        all.push(ms);
        byKind[q.kind].push(ms);
        // A search that recounted the figures (kept 30 s) is the reader's first again.
        if (t.recounted()) recounts++;
        else warmOnly.push(ms);
      }
    }
    const b = await blocks.delta();
    return {
      queries: all.length,
      hitsPerQuery: round(hits / all.length, 1),
      firstOfReader: { p50: round(percentile(first, 50)), max: round(Math.max(...first)) },
      all: latency(all),
      recountsInTimedQueries: recounts,
      withoutRecount: latency(warmOnly),
      statementSeconds: Object.fromEntries(Object.entries(t.spent).map(([k, v]) => [k, round(v / 1000, 1)])),
      rare: latency(byKind.rare),
      common: latency(byKind.common),
      question: latency(byKind.question),
      messageBlocks: { sharedBufferHits: b.hit, readFromOs: b.read, hitRatio: round(b.hit / Math.max(1, b.hit + b.read), 3) },
    };
  } finally {
    await blocks.close();
  }
}

/** A turn's core cost, as bench/cost.ts measures it: Core.handle() minus the fake model's time. */
async function turnCost(bench: BenchDatabase) {
  const model = fakeModel(() => ({ text: "Done: the pipeline is green." }));
  const core = await benchCore(bench.database, model);
  try {
    let seq = 0;
    const turn = async (i: number) => {
      const q0 = bench.queries();
      const m0 = model.spentMs;
      const t0 = now();
      const inbound = channelMessage(seedWorkspace(0), seedUser(i % 30), seedChannel(i % 10), `question ${seq} about the deploy pipeline and the staging database`, `scale-${Date.now()}-${seq++}`);
      await replyText(core, inbound, { answered: true });
      return { ms: now() - t0 - (model.spentMs - m0), q: bench.queries() - q0 };
    };
    for (let i = 0; i < 20; i++) await turn(30 + i);
    const samples = [];
    for (let t = 0; t < 10; t++) for (let c = 0; c < 30; c++) samples.push(await turn(c));
    const ms = samples.map((s) => s.ms);
    return { turns: samples.length, p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)), sqlPerTurn: round(samples.reduce((a, s) => a + s.q, 0) / samples.length, 1) };
  } finally {
    await core.stopBackground();
  }
}

interface Step {
  messages: number;
  seconds: { sessions: number; messages: number; indexes: number; vacuumAnalyze: number; perIndex: Record<string, number> };
  messagesPerSecond: number;
  sizes: Sizes;
  search: Awaited<ReturnType<typeof searchStep>>;
  turns: Awaited<ReturnType<typeof turnCost>>;
}

export async function run(): Promise<BenchOutcome> {
  const bench = await openBenchDatabase("scale", { countQueries: true });
  if (bench.provider !== "postgresql") {
    await bench.close();
    return { name: "scale", table: "", result: {}, skipped: "PostgreSQL only: set DATABASE_URL=postgresql://..." };
  }
  try {
    const steps = (process.env.BENCH_SCALE_STEPS ?? "1000000,10000000").split(",").map((s) => Number(s.trim()));
    const qs = queries(Number(process.env.BENCH_SCALE_QUERIES ?? 240));
    await seedShape(bench.url, SHAPE);
    const indexes = await messageIndexes(bench.url);
    const admin = new pg.Client({ connectionString: bench.url });
    await admin.connect();
    const settings = Object.fromEntries(
      (await admin.query<{ name: string; value: string }>(`SELECT name, current_setting(name) AS value FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'max_wal_size')`)).rows.map((r) => [r.name, r.value]),
    );
    const rows: Step[] = [];
    let have = 0;
    try {
      for (const target of steps) {
        const log = (s: string) => process.stderr.write(`  [${target.toLocaleString("en")}] ${s}\n`);
        await dropIndexes(bench.url, indexes);
        let shown = 0;
        const loadedFrom = have + 1;
        const load = await seedMessages(bench.url, SHAPE, loadedFrom, target, (n) => {
          if (n - shown >= 500_000) log(`loaded ${(shown = n).toLocaleString("en")} more messages`);
        });
        log(`loaded in ${round(load.messagesSeconds, 0)} s; building ${indexes.length} indexes`);
        const t0 = now();
        const perIndex = await createIndexes(bench.url, indexes);
        const indexSeconds = (now() - t0) / 1000;
        log(`indexes in ${round(indexSeconds, 0)} s; VACUUM ANALYZE`);
        const t1 = now();
        await admin.query(`VACUUM ANALYZE "Message"`);
        await admin.query(`VACUUM ANALYZE "ChatSession"`);
        await admin.query(`ANALYZE`);
        const vacuumSeconds = (now() - t1) / 1000;
        const size = await sizes(bench.url);
        log(`database ${size.databaseMB} MB; searching`);
        const search = await searchStep(bench, qs);
        log(`search p50/p95 ${search.all.p50}/${search.all.p95} ms; turns`);
        const turns = await turnCost(bench);
        // The turns stored messages too: the next step's ids start after them.
        have = Number((await admin.query(`SELECT max(id) AS m FROM "Message"`)).rows[0]!.m);
        rows.push({
          messages: target,
          seconds: { sessions: round(load.sessionsSeconds, 1), messages: round(load.messagesSeconds, 1), indexes: round(indexSeconds, 1), vacuumAnalyze: round(vacuumSeconds, 1), perIndex },
          messagesPerSecond: round((target - loadedFrom + 1) / load.messagesSeconds, 0),
          sizes: size,
          search,
          turns,
        });
      }
    } finally {
      await admin.end();
    }
    const first = rows[0]!;
    const last = rows.at(-1)!;
    const gin = (s: Sizes) => s.indexesMB["Message_search_chat_idx"] ?? 0;
    const text = [
      `scale on PostgreSQL: ${SHAPE.workspaces.join("/")} people in ${SHAPE.workspaces.length} workspaces, ${SHAPE.vocabulary.toLocaleString("en")}-word Zipf vocabulary; ${qs.length} queries from ${READERS} readers of the 5,000-person workspace; server ${JSON.stringify(settings)}`,
      table(
        ["messages", "load s", "indexes s", "vacuum s", "db MB", "Message MB", "heap MB", "GIN search MB", "GIN cjk MB", "first p50/max ms", "p50 ms", "p95 ms", "p99 ms", "no recount p50/p95", "recounts", "rare p50/p95", "common p50/p95", "question p50/p95", "buffer hit", "turn p50/p99 ms"],
        rows.map((r) => [
          r.messages.toLocaleString("en"),
          r.seconds.messages,
          r.seconds.indexes,
          r.seconds.vacuumAnalyze,
          r.sizes.databaseMB,
          r.sizes.messageTotalMB,
          r.sizes.messageHeapMB,
          gin(r.sizes),
          r.sizes.indexesMB["Message_cjk_idx"] ?? 0,
          `${r.search.firstOfReader.p50}/${r.search.firstOfReader.max}`,
          r.search.all.p50,
          r.search.all.p95,
          r.search.all.p99,
          `${r.search.withoutRecount.p50}/${r.search.withoutRecount.p95}`,
          r.search.recountsInTimedQueries,
          `${r.search.rare.p50}/${r.search.rare.p95}`,
          `${r.search.common.p50}/${r.search.common.p95}`,
          `${r.search.question.p50}/${r.search.question.p95}`,
          r.search.messageBlocks.hitRatio,
          `${r.turns.p50}/${r.turns.p99}`,
        ]),
      ),
      rows.length > 1
        ? `${last.messages.toLocaleString("en")} / ${first.messages.toLocaleString("en")}: search p50 x${round(last.search.all.p50 / first.search.all.p50)}, p95 x${round(last.search.all.p95 / first.search.all.p95)}, first search x${round(last.search.firstOfReader.p50 / first.search.firstOfReader.p50)}; database x${round(last.sizes.databaseMB / first.sizes.databaseMB)}, GIN x${round(gin(last.sizes) / Math.max(0.1, gin(first.sizes)))}; turn p50 x${round(last.turns.p50 / first.turns.p50)}`
        : "",
      `time in each kind of search statement (s, summed over the timed searches): ${rows.map((r) => `${r.messages.toLocaleString("en")}: ${JSON.stringify(r.search.statementSeconds)}`).join("; ")}`,
    ].join("\n");
    return { name: "scale", table: text, result: { provider: bench.provider, shape: SHAPE, server: settings, queries: qs.length, readers: READERS, indexesRebuiltAfterEachStep: indexes.map((i) => i.name), steps: rows } };
  } finally {
    await bench.close();
  }
}
