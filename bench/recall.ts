/**
 * Recall on long conversations (LoCoMo): each conversation is stored through cairn's own
 * HistoryStore (one workspace per conversation, one channel, each turn a message by its speaker at
 * its session's time) and each question of categories 1-4 is asked through searchMessages, the
 * search `session_search` uses, from a third person's place in the same workspace. Recall@k =
 * share of a question's evidence turns among the first k results, averaged.
 *
 * Beside it, in the same run: the reference BM25 baseline (../shared/bench/README.md) over the same
 * turns, each ranking lever of src/history/rank.ts switched off in turn, and a small CJK check
 * (Chinese and Japanese questions, scope rules included).
 */
import { PerformanceObserver, constants, type PerformanceEntry } from "node:perf_hooks";
import { HistoryStore, scopeOf } from "../src/history/store/store.ts";
import { searchMessages } from "../src/history/store/search.ts";
import { DEFAULT_RANKING, type RankingOptions } from "../src/history/rank.ts";
import type { Database } from "../src/db/client.ts";
import type { Inbound, Scope } from "../src/ground/types.ts";
import { Embedder } from "../src/providers/embeddings/embedder.ts";
import type { EmbeddingsSettings } from "../src/providers/embeddings/client.ts";
import { VectorStore } from "../src/providers/embeddings/vector-store.ts";
import { Metrics } from "../src/ops/metrics.ts";
import { silentLogger } from "../src/ground/log.ts";
import { startFakeEmbeddings } from "../test/fakes/embeddings.ts";
import { openBenchDatabase } from "./lib/db.ts";
import { Bm25Index } from "./lib/bm25.ts";
import { CATEGORY_NAMES, loadLoCoMo, type Conversation, type Question } from "./lib/locomo.ts";
import { mean, now, percentile, round, table } from "./lib/report.ts";
import type { BenchOutcome } from "./run.ts";

const KS = [5, 10, 20] as const;

interface Recall {
  "recall@5": number;
  "recall@10": number;
  "recall@20": number;
}

interface Scored {
  category: number;
  /** Recall at 5, 10, 20 for one question (0-1). */
  r: [number, number, number];
  ms: number;
}

interface GcPause {
  start: number;
  ms: number;
  minor: boolean;
}

/**
 * Garbage collections while `work` runs. The p95 tail is the collector (a scavenge of several ms
 * lands inside a query), so how often it runs is the figure that moves with allocation, and unlike
 * wall time it does not depend on what else the 2-core machine is doing. (Heap figures are not read
 * per query: v8.getHeapStatistics() in the loop made the scavenger promote what it would otherwise
 * have freed, doubling the cost of each scavenge it measured.)
 */
async function withGc<T>(work: () => Promise<T>): Promise<{ value: T; pauses: GcPause[] }> {
  const pauses: GcPause[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      pauses.push({ start: e.startTime, ms: e.duration, minor: kind === constants.NODE_PERFORMANCE_GC_MINOR });
    }
  });
  obs.observe({ entryTypes: ["gc"] });
  try {
    const value = await work();
    // Entries are delivered asynchronously: let the last ones arrive.
    await new Promise((r) => setTimeout(r, 50));
    return { value, pauses };
  } finally {
    obs.disconnect();
  }
}

interface GcFigures {
  scavenges: number;
  scavengeMs: number;
  majorGcs: number;
  majorMs: number;
  /** Queries with a collection starting inside them. */
  queriesWithGc: number;
}

function gcFigures(pauses: readonly GcPause[], spans: readonly [number, number][]): GcFigures {
  const minor = pauses.filter((p) => p.minor);
  const major = pauses.filter((p) => !p.minor);
  return {
    scavenges: minor.length,
    scavengeMs: round(minor.reduce((n, p) => n + p.ms, 0), 0),
    majorGcs: major.length,
    majorMs: round(major.reduce((n, p) => n + p.ms, 0), 0),
    queriesWithGc: spans.filter(([a, b]) => pauses.some((p) => p.start >= a && p.start <= b)).length,
  };
}

function recallOf(ranked: readonly number[], evidence: readonly number[]): [number, number, number] {
  return KS.map((k) => {
    const top = new Set(ranked.slice(0, k));
    return evidence.filter((e) => top.has(e)).length / evidence.length;
  }) as [number, number, number];
}

function summarize(scored: readonly Scored[]): Recall {
  const at = (j: number) => round(100 * mean(scored.map((s) => s.r[j]!)), 1);
  return { "recall@5": at(0), "recall@10": at(1), "recall@20": at(2) };
}

function byCategory(scored: readonly Scored[]): Record<string, Recall & { name: string; questions: number }> {
  const out: Record<string, Recall & { name: string; questions: number }> = {};
  for (const c of [1, 2, 3, 4]) {
    const of = scored.filter((s) => s.category === c);
    out[String(c)] = { name: CATEGORY_NAMES[c]!, questions: of.length, ...summarize(of) };
  }
  return out;
}

function latency(scored: readonly Scored[]): { p50: number; p95: number } {
  const ms = scored.map((s) => s.ms);
  return { p50: round(percentile(ms, 50), 2), p95: round(percentile(ms, 95), 2) };
}

interface Ingested {
  conversation: Conversation;
  scope: Scope;
  /** Message id of each turn, by turn index. */
  ids: number[];
  byId: Map<number, number>;
}

function inbound(workspace: string, author: string, text: string, messageId: string, sentAt: Date): Inbound {
  return {
    platform: "slack",
    workspace: { externalId: workspace },
    author: { externalId: author, displayName: author },
    channel: { externalId: "C-LOCOMO", isDm: false },
    threadId: null,
    messageId,
    text,
    sentAt,
  };
}

async function ingest(db: Database, c: Conversation): Promise<Ingested> {
  const store = new HistoryStore(db);
  const places = new Map<string, Awaited<ReturnType<HistoryStore["resolve"]>>>();
  const ids: number[] = [];
  for (const t of c.turns) {
    const msg = inbound(c.id, t.speaker, t.text, t.diaId, t.at);
    let place = places.get(t.speaker);
    if (!place) {
      place = await store.resolve(msg);
      places.set(t.speaker, place);
    }
    const stored = await store.recordInbound(place, msg);
    if (!stored) throw new Error(`${c.id} ${t.diaId} stored twice`);
    ids.push(stored.id);
  }
  // The asker: someone else in the same workspace and channel, so scope admits the conversation.
  const asker = await store.resolve(inbound(c.id, "bench-asker", "", "asker", new Date()));
  return { conversation: c, scope: scopeOf(asker), ids, byId: new Map(ids.map((id, i) => [id, i])) };
}

/** A conversation around a question: what the asker said before it (see the off-topic row). */
type ContextOf = (questions: readonly Question[], i: number) => string[];

async function runCairn(db: Database, data: Ingested[], ranking: Partial<RankingOptions> = {}, spans?: [number, number][], contextOf?: ContextOf): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const d of data) {
    for (const [i, q] of d.conversation.questions.entries()) {
      const t0 = now();
      const context = contextOf?.(d.conversation.questions, i);
      const hits = await searchMessages(db, d.scope, q.question, { limit: 20, ranking, ...(context ? { context } : {}) });
      const t1 = now();
      spans?.push([t0, t1]);
      const ranked = hits.map((h) => d.byId.get(h.messageId)).filter((i): i is number => i !== undefined);
      out.push({ category: q.category, r: recallOf(ranked, q.evidence), ms: t1 - t0 });
    }
  }
  return out;
}

/**
 * The shipped search measured `passes` times back to back (RECALL_PASSES, default 1): latency and
 * collections per pass, so a change can be compared on medians rather than on one noisy run.
 */
async function measureShipped(db: Database, data: Ingested[], passes: number): Promise<{ scored: Scored[]; passes: { latencyMs: { p50: number; p95: number }; gc: GcFigures }[] }> {
  const out = [];
  let first: Scored[] = [];
  for (let i = 0; i < passes; i++) {
    const spans: [number, number][] = [];
    const { value: scored, pauses } = await withGc(() => runCairn(db, data, {}, spans));
    if (i === 0) first = scored;
    out.push({ latencyMs: latency(scored), gc: gcFigures(pauses, spans) });
  }
  return { scored: first, passes: out };
}

/**
 * The search with a query vector fused in (issue 30): every stored turn embedded through the real
 * Embedder, each question's vector asked as session_search asks it. The endpoint is
 * CAIRN_EMBEDDINGS_URL / _MODEL when set, else the fake embeddings server, whose vectors are hashed
 * words (no meaning): with it, the row shows what fusion costs and does with a stand-in, not what a
 * real model would find.
 */
async function runHybrid(db: Database, data: Ingested[]): Promise<{ scored: Scored[]; endpoint: string; embedMs: number; queryMs: number[] }> {
  const real = process.env.CAIRN_EMBEDDINGS_URL && process.env.CAIRN_EMBEDDINGS_MODEL;
  const fake = real ? null : await startFakeEmbeddings();
  try {
    const dims = process.env.CAIRN_EMBEDDINGS_DIMENSIONS ? Number(process.env.CAIRN_EMBEDDINGS_DIMENSIONS) : undefined;
    const settings: EmbeddingsSettings = fake
      ? { url: fake.url, model: "fake-embed", dimensions: 256, timeoutMs: 30_000 }
      : { url: process.env.CAIRN_EMBEDDINGS_URL!, model: process.env.CAIRN_EMBEDDINGS_MODEL!, apiKey: process.env.CAIRN_EMBEDDINGS_API_KEY, dimensions: dims, timeoutMs: 30_000 };
    const store = new VectorStore(db);
    const embedder = new Embedder({ settings, store, metrics: new Metrics({ processMetrics: false }), log: silentLogger, batch: 64 });
    const t0 = now();
    for (let step = await embedder.step(); step !== "idle"; step = await embedder.step()) {
      if (step === "failed") throw new Error(`embedding the turns failed against ${settings.url}`);
    }
    const embedMs = now() - t0;
    const space = embedder.currentSpace()!;
    const out: Scored[] = [];
    const queryMs: number[] = [];
    for (const d of data) {
      for (const q of d.conversation.questions) {
        const e0 = now();
        const vector = await embedder.queryVector(q.question, 5000);
        queryMs.push(now() - e0);
        const t1 = now();
        const hits = await searchMessages(db, d.scope, q.question, { limit: 20, ...(vector ? { vector } : {}) });
        const ms = now() - t1;
        const ranked = hits.map((h) => d.byId.get(h.messageId)).filter((i): i is number => i !== undefined);
        out.push({ category: q.category, r: recallOf(ranked, q.evidence), ms });
      }
    }
    return { scored: out, endpoint: fake ? `fake embeddings server (hashed words, ${space})` : `${settings.url} (${space})`, embedMs, queryMs };
  } finally {
    await fake?.close();
  }
}

function runBaseline(data: Ingested[]): Scored[] {
  const out: Scored[] = [];
  for (const d of data) {
    const index = new Bm25Index(d.conversation.turns.map((t) => `${t.dateText}: ${t.speaker}: ${t.text}`));
    for (const q of d.conversation.questions as Question[]) {
      const t0 = now();
      const ranked = index.search(q.question, 20);
      out.push({ category: q.category, r: recallOf(ranked, q.evidence), ms: now() - t0 });
    }
  }
  return out;
}

/** Each lever off in turn (and all off): what each one adds, measured on the real search. */
const LEVERS: { name: string; ranking: Partial<RankingOptions> }[] = [
  { name: "cairn search (all levers)", ranking: {} },
  { name: "- neighbours", ranking: { window: 0 } },
  { name: "- answer inherits question", ranking: { afterQuestion: DEFAULT_RANKING.fromBefore } },
  { name: "- elaboration after a question", ranking: { followUp: DEFAULT_RANKING.fromBefore } },
  { name: "- session score", ranking: { session: 0 } },
  { name: "- named person", ranking: { author: 0 } },
  { name: "- dates", ranking: { date: 0 } },
  { name: "- 'when' questions prefer messages that say when", ranking: { when: 0 } },
  { name: "- strong matches lend more (lend curve)", ranking: { lendCurve: 1 } },
  { name: "stemmed BM25 only (b 0.4)", ranking: { window: 0, session: 0, author: 0, date: 0, when: 0 } },
  { name: "stemmed BM25 only (b 0.75)", ranking: { window: 0, session: 0, author: 0, date: 0, when: 0, b: 0.75 } },
];

/** Chinese and Japanese: questions that share no spaces-delimited word with their answers. */
const CJK_MESSAGES = [
  { who: "li", text: "支付服务上周已经部署到新加坡的服务器了，回滚脚本在运维仓库里。" },
  { who: "li", text: "周五下午三点开季度复盘会议，地点在三楼大会议室。" },
  { who: "wang", text: "午饭我们去楼下吃拉面吧。" },
  { who: "sato", text: "本番環境へのデプロイは毎週木曜日の夜に行います。" },
  { who: "sato", text: "新しいメンバーの山田さんは来月からフロントエンドを担当します。" },
  { who: "wang", text: "The staging database was rotated last night." },
];
const CJK_QUESTIONS = [
  { q: "支付服务部署到哪里了？", answer: 0 },
  { q: "复盘会议是什么时候？", answer: 1 },
  { q: "デプロイはいつですか？", answer: 3 },
  { q: "山田さんは何を担当しますか", answer: 4 },
];

async function cjkCheck(db: Database): Promise<{ questions: number; found1: number; found5: number; dmLeaks: number; ms: number[] }> {
  const store = new HistoryStore(db);
  const ws = "bench-cjk";
  const ids: number[] = [];
  for (const [i, m] of CJK_MESSAGES.entries()) {
    const msg = inbound(ws, m.who, m.text, `cjk-${i}`, new Date(Date.UTC(2026, 0, 5, 9, i)));
    const stored = await store.recordInbound(await store.resolve(msg), msg);
    ids.push(stored!.id);
  }
  // Another person's DM holding the same words: must never be found from the asker's place.
  const dm: Inbound = { ...inbound(ws, "secret-holder", "支付服务部署到新加坡的服务器，デプロイは木曜日", "cjk-dm", new Date()), channel: { externalId: "D-SECRET", isDm: true } };
  const dmMsg = await store.recordInbound(await store.resolve(dm), dm);
  const asker = scopeOf(await store.resolve(inbound(ws, "asker", "", "cjk-asker", new Date())));
  let found1 = 0;
  let found5 = 0;
  let dmLeaks = 0;
  const ms: number[] = [];
  for (const c of CJK_QUESTIONS) {
    const t0 = now();
    const hits = (await searchMessages(db, asker, c.q, { limit: 5 })).map((h) => h.messageId);
    ms.push(now() - t0);
    if (hits[0] === ids[c.answer]) found1++;
    if (hits.includes(ids[c.answer]!)) found5++;
    if (hits.includes(dmMsg!.id)) dmLeaks++;
  }
  return { questions: CJK_QUESTIONS.length, found1, found5, dmLeaks, ms };
}

export async function run(): Promise<BenchOutcome> {
  const data = loadLoCoMo();
  if (!data) {
    const path = process.env.LOCOMO_PATH ?? "../shared/bench/locomo/locomo-dev.json";
    return { name: "recall", skipped: `benchmark data not found at ${path} (set LOCOMO_PATH)`, table: "", result: { skipped: true } };
  }
  const bench = await openBenchDatabase("recall");
  try {
    const db = bench.database;
    const t0 = now();
    const ingested: Ingested[] = [];
    for (const c of data.conversations) ingested.push(await ingest(db, c));
    const ingestMs = now() - t0;
    const turns = data.conversations.reduce((n, c) => n + c.turns.length, 0);

    // Warm-up (JIT, statement caches) on a few questions, not counted.
    await runCairn(db, ingested.map((d) => ({ ...d, conversation: { ...d.conversation, questions: d.conversation.questions.slice(0, 5) } })));
    const shipped = await measureShipped(db, ingested, Math.max(1, Number(process.env.RECALL_PASSES ?? 1)));
    const levers = [{ name: LEVERS[0]!.name, ranking: LEVERS[0]!.ranking, scored: shipped.scored }];
    // RECALL_LEVERS=0 measures only the search as shipped (a quicker run while tuning).
    for (const lever of process.env.RECALL_LEVERS === "0" ? [] : LEVERS.slice(1)) {
      const scored = await runCairn(db, ingested, lever.ranking);
      levers.push({ name: lever.name, ranking: lever.ranking, scored });
    }
    // The conversation lever (rank.ts 6) has nothing to read here: LoCoMo's questions come alone.
    // What it does with a conversation it was not written for: each question asked right after the
    // one before it in the data set (often another topic, sometimes the same), that one as the
    // conversation, as a turn passes the message before the one it answers.
    const offTopic = process.env.RECALL_LEVERS === "0" ? null : await runCairn(db, ingested, {}, undefined, (qs, i) => qs.slice(Math.max(0, i - 1), i + 1).map((q) => q.question));
    if (offTopic) levers.push({ name: "+ the question before it as the conversation", ranking: {}, scored: offTopic });
    const main = levers[0]!.scored;
    const baseline = runBaseline(ingested);
    // RECALL_HYBRID=0 leaves the vector row out.
    const hybrid = process.env.RECALL_HYBRID === "0" ? null : await runHybrid(db, ingested);
    const cjk = await cjkCheck(db);

    const result = {
      database: bench.provider,
      questions: main.length,
      turns,
      conversations: data.conversations.length,
      skippedEvidence: data.skippedEvidence,
      skippedQuestions: data.skippedQuestions,
      dataPath: data.path,
      overall: summarize(main),
      byCategory: byCategory(main),
      latencyMs: latency(main),
      passes: shipped.passes,
      baseline: { method: "plain BM25 over 'date: speaker: text', k1 1.2, b 0.75, no stemming", overall: summarize(baseline), byCategory: byCategory(baseline), latencyMs: latency(baseline) },
      hybrid: hybrid
        ? {
            endpoint: hybrid.endpoint,
            note: hybrid.endpoint.startsWith("fake") ? "the fake's vectors are hashed words, not a semantic model: this row measures fusion's cost and effect with that stand-in only" : "a real embeddings endpoint (CAIRN_EMBEDDINGS_URL)",
            overall: summarize(hybrid.scored),
            byCategory: byCategory(hybrid.scored),
            latencyMs: latency(hybrid.scored),
            embedTurnsMs: round(hybrid.embedMs, 0),
            queryEmbedMs: { p50: round(percentile(hybrid.queryMs, 50), 2), p95: round(percentile(hybrid.queryMs, 95), 2) },
          }
        : null,
      gainOverBaseline: { "recall@10": round(summarize(main)["recall@10"] - summarize(baseline)["recall@10"], 1) },
      levers: levers.map((l) => ({ name: l.name, ranking: l.ranking, overall: summarize(l.scored), latencyMs: latency(l.scored) })),
      cjk: { questions: cjk.questions, foundAt1: cjk.found1, foundAt5: cjk.found5, otherPersonsDmFound: cjk.dmLeaks, latencyMs: { p50: round(percentile(cjk.ms, 50)), max: round(Math.max(...cjk.ms)) } },
      ingest: { messages: turns, ms: round(ingestMs, 0), messagesPerSecond: round((turns / ingestMs) * 1000, 0) },
      ranking: DEFAULT_RANKING,
    };

    const row = (name: string, r: Recall, lat: { p50: number; p95: number }): (string | number)[] => [name, r["recall@5"], r["recall@10"], r["recall@20"], lat.p50, lat.p95];
    const head = ["", "R@5", "R@10", "R@20", "p50 ms", "p95 ms"];
    const hy = result.hybrid;
    const cats = [1, 2, 3, 4].map((c) => {
      const m = result.byCategory[String(c)]!;
      const b = result.baseline.byCategory[String(c)]!;
      const h = hy?.byCategory[String(c)];
      return [`${c} ${m.name} (${m.questions})`, m["recall@5"], m["recall@10"], m["recall@20"], b["recall@10"], ...(h ? [h["recall@5"], h["recall@10"], h["recall@20"]] : [])];
    });
    const hyName = hy ? (hy.endpoint.startsWith("fake") ? "hybrid (fake vectors)" : "hybrid (real endpoint)") : "";
    const text = [
      `LoCoMo recall on ${bench.provider}: ${result.questions} questions over ${turns} messages in ${result.conversations} workspaces (${data.skippedEvidence} evidence ids skipped, ${data.skippedQuestions} questions without evidence)`,
      table(head, [row("lexical (cairn search)", result.overall, result.latencyMs), ...(hy ? [row(hyName, hy.overall, hy.latencyMs)] : []), row("baseline BM25", result.baseline.overall, result.baseline.latencyMs)]),
      ...(hy
        ? [
            `${hyName}: vectors from ${hy.endpoint}; turns embedded in ${hy.embedTurnsMs} ms, a query's vector p50 ${hy.queryEmbedMs.p50} ms (not in the search's p50/p95).`,
            hy.endpoint.startsWith("fake") ? "The fake's vectors are hashed words, not a semantic model: the hybrid row measures fusion's cost and effect with that stand-in only; it claims no recall for a real model." : "",
          ].filter(Boolean)
        : []),
      "",
      table(["category", "R@5", "R@10", "R@20", "baseline R@10", ...(hy ? ["hybrid R@5", "hybrid R@10", "hybrid R@20"] : [])], cats),
      "",
      "shipped search, pass by pass (garbage collections during its queries):",
      table(
        ["pass", "p50 ms", "p95 ms", "scavenges", "scavenge ms", "major", "major ms", "queries with a GC"],
        shipped.passes.map((p, i) => [String(i + 1), p.latencyMs.p50, p.latencyMs.p95, p.gc.scavenges, p.gc.scavengeMs, p.gc.majorGcs, p.gc.majorMs, p.gc.queriesWithGc]),
      ),
      "",
      "levers (each switched off in turn; the last row adds an off-topic conversation):",
      table(head, result.levers.map((l) => row(l.name, l.overall, l.latencyMs))),
      "",
      `CJK check: ${cjk.found1}/${cjk.questions} answers ranked first, ${cjk.found5}/${cjk.questions} in the top 5, another person's DM found ${cjk.dmLeaks} times`,
      `ingest: ${turns} messages through HistoryStore in ${Math.round(ingestMs)} ms`,
    ].join("\n");
    return { name: "recall", table: text, result };
  } finally {
    await bench.close();
  }
}
