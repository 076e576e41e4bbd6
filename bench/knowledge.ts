/**
 * Channel knowledge (src/knowledge): how fast a channel's history is read back into the database,
 * and what a search costs with a million kept messages beside the history.
 *
 * Backfill: BENCH_BACKFILL_MESSAGES (default 20,000) messages of one channel, read back through the
 * real backfill job (pages of 200 from an in-memory platform, kept in batches); the baseline, in
 * the same run, is the same messages kept one at a time as they arrive live. Three runs each,
 * fresh channels; messages per second, medians.
 *
 * Search: history seeded as the cost benchmark seeds it (BENCH_KNOWLEDGE_HISTORY, default 200,000
 * messages), searched from a person's place: the baseline. Then BENCH_KNOWLEDGE_MESSAGES (default
 * 1,000,000) messages kept in 20 listened channels of that workspace (through the backfill job),
 * and the same queries again, by someone who can read none of them and by someone who can read
 * half. p50 / p95 ms and the ratio to the baseline. Their text comes from a 60-word vocabulary:
 * the pessimistic case, where three words match a large share of everything.
 *
 * Realistic text: searched the same way in a second workspace of the same history, its baseline taken
 * with the history alone, then BENCH_KNOWLEDGE_MESSAGES kept messages in 20 more listened channels
 * whose text is LoCoMo conversation text (dev set, bench/lib/knowledge-text.ts: the turns of its
 * conversations in turn, cycled), queried with 200 LoCoMo questions (categories 1-4). A workspace of
 * its own so it holds as many kept messages as the pessimistic one; the pessimistic messages stay
 * in the database beside it. Skipped, with the reason in the table, when the data is absent.
 */
import { openBenchDatabase } from "./lib/db.ts";
import { benchCore } from "./lib/core.ts";
import { fakeModel } from "./lib/model.ts";
import { rng, seed, seedUser, seedWorkspace, type SeedPlan } from "./lib/seed.ts";
import { median, now, percentile, round, table } from "./lib/report.ts";
import { channelPlatform, type ChannelPlatform } from "../test/support/channel-platform.ts";
import { searchMessages } from "../src/history/store/search.ts";
import { scopeOfWorkspace } from "../src/history/store/store.ts";
import type { Core } from "../src/app/core.ts";
import type { Scope } from "../src/ground/types.ts";
import type { Database } from "../src/db/client.ts";
import type { BenchOutcome } from "./run.ts";
import { placeScope } from "../src/db/scopes.ts";
import { loadLoCoMo, type LoCoMo } from "./lib/locomo.ts";
import { conversationQueries, fillWithConversations } from "./lib/knowledge-text.ts";

const WORDS = (
  "deploy release staging production rollback migration database index query latency cache queue worker review merge branch pipeline build " +
  "test alert incident oncall runbook postmortem customer ticket billing invoice payment refund pricing design onboarding login token api " +
  "webhook schema meeting standup planning sprint roadmap quarter launch demo feedback metrics dashboard decided agreed owner deadline"
).split(" ");

function text(r: () => number): string {
  const n = 6 + Math.floor(r() * 18);
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]!).join(" ");
}

/** `count` messages of `channel`, newest `span` ms back from now, by 50 people. */
function fill(p: ChannelPlatform, channel: string, count: number, r: () => number): void {
  const end = Date.now();
  const span = 80 * 24 * 60 * 60_000;
  p.history.set(
    channel,
    Array.from({ length: count }, (_, i) => p.message(channel, `${channel}-${i}`, `K${Math.floor(r() * 50)}`, text(r), new Date(end - span + Math.floor((i * span) / count)))),
  );
}

/** Listening on in `channel` (as `listen on` sets it) and the backfill run to its end; seconds. */
async function backfill(core: Core, workspace: string, channel: string): Promise<number> {
  const ws = await core.history.workspaceOf("slack", workspace);
  const at = new Date();
  const listen = await core.knowledge.listens.switchOn(scopeOfWorkspace(ws), channel, at, null);
  const t0 = now();
  await core.knowledge.queueBackfill(listen.id, at);
  await core.learning.drain();
  return (now() - t0) / 1000;
}

/** The 20 listened channels of `workspace` filled by `fillChannel`, each kept through the backfill job; seconds. */
async function keepChannels(core: Core, workspace: string, channels: readonly string[], fillChannel: (p: ChannelPlatform, channel: string, index: number) => void): Promise<number> {
  const p = channelPlatform("slack", workspace);
  core.attach(p);
  const t0 = now();
  for (const [i, channel] of channels.entries()) {
    fillChannel(p, channel, i);
    await backfill(core, workspace, channel);
    p.history.delete(channel);
    process.stderr.write(`  kept ${channel} (${Math.round((now() - t0) / 1000)} s)\n`);
  }
  return (now() - t0) / 1000;
}

/** A person of the seeded `workspace`, searching from a DM of theirs. */
async function askerIn(core: Core, workspace: string): Promise<Scope> {
  const ws = await core.history.workspaceOf("slack", workspace);
  const person = await core.history.person(scopeOfWorkspace(ws), { externalId: seedUser(0) });
  return placeScope(person, { id: "bench", workspaceId: ws.id, channelId: "bench", isDm: true });
}

async function searchTimes(db: Database, scope: Scope, queries: readonly string[], readable: readonly string[]): Promise<{ p50: number; p95: number; hits: number }> {
  const ms: number[] = [];
  let hits = 0;
  // Warm-up: statements prepared, pages cached.
  for (const q of queries.slice(0, 10)) await searchMessages(db, scope, q, { limit: 10, readable });
  for (const q of queries) {
    const t0 = now();
    hits += (await searchMessages(db, scope, q, { limit: 10, readable })).length;
    ms.push(now() - t0);
  }
  return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), hits };
}

function locomoAbsent(): string {
  return `LoCoMo data not found at ${process.env.LOCOMO_PATH ?? "../shared/bench/locomo/locomo-dev.json"} (set LOCOMO_PATH)`;
}

/** The realistic row: 20 channels of LoCoMo text kept in the asker's workspace, then the questions by a reader of none and of half. */
async function realistic(core: Core, db: Database, data: LoCoMo, scope: Scope, queries: readonly string[], share: number) {
  const channels = Array.from({ length: 20 }, (_, i) => `R${i}`);
  const seconds = await keepChannels(core, seedWorkspace(1), channels, (p, channel, i) => fillWithConversations(p, channel, i, share, data));
  const none = await searchTimes(db, scope, queries, []);
  const half = await searchTimes(db, scope, queries, channels.slice(0, 10));
  return { seconds, none, half };
}

export async function run(): Promise<BenchOutcome> {
  const bench = await openBenchDatabase("knowledge");
  try {
    const core = await benchCore(bench.database, fakeModel(() => ({ text: "ok" })));
    const r = rng(17);

    // Backfill against keeping the same messages one by one, as live events keep them.
    const backfillCount = Number(process.env.BENCH_BACKFILL_MESSAGES ?? 20_000);
    const live: number[] = [];
    const batched: number[] = [];
    for (let run = 0; run < 3; run++) {
      const p = channelPlatform("slack", "bf-ws");
      core.attach(p);
      fill(p, `BF${run}`, backfillCount, r);
      batched.push(backfillCount / (await backfill(core, "bf-ws", `BF${run}`)));
      const ws = await core.history.workspaceOf("slack", "bf-ws");
      const channel = `LV${run}`;
      fill(p, channel, backfillCount, r);
      const t0 = now();
      for (const m of p.history.get(channel)!) await core.knowledge.store.keep(ws, channel, [m]);
      live.push(backfillCount / ((now() - t0) / 1000));
    }

    // Search: history first (the baseline), then a million kept messages beside it.
    const historyPlan: SeedPlan = { workspaces: 10, messages: Number(process.env.BENCH_KNOWLEDGE_HISTORY ?? 200_000), memoryEntries: 100, skills: 10, peoplePerWorkspace: 20, channelsPerWorkspace: 10 };
    await seed(bench.provider, bench.url, historyPlan);
    const scope = await askerIn(core, seedWorkspace(0));
    const queries = Array.from({ length: 200 }, () => `${WORDS[Math.floor(r() * WORDS.length)]} ${WORDS[Math.floor(r() * WORDS.length)]} ${WORDS[Math.floor(r() * WORDS.length)]}`);
    const baseline = await searchTimes(bench.database, scope, queries, []);
    // The realistic row's baseline, also with the history alone (its own rng: the rows above stay as they were).
    const data = loadLoCoMo();
    const realScope = data ? await askerIn(core, seedWorkspace(1)) : null;
    const realQueries = data ? conversationQueries(data, 200, rng(29)) : [];
    const realBaseline = realScope ? await searchTimes(bench.database, realScope, realQueries, []) : null;

    const total = Number(process.env.BENCH_KNOWLEDGE_MESSAGES ?? 1_000_000);
    const share = Math.floor(total / 20);
    const channels = Array.from({ length: 20 }, (_, i) => `K${i}`);
    const seedSeconds = await keepChannels(core, seedWorkspace(0), channels, (p, channel) => fill(p, channel, share, r));
    const none = await searchTimes(bench.database, scope, queries, []);
    const half = await searchTimes(bench.database, scope, queries, channels.slice(0, 10));
    const real = data && realScope && realBaseline ? await realistic(core, bench.database, data, realScope, realQueries, share) : null;

    const rows: (string | number)[][] = [
      [`backfill, ${backfillCount} messages (median of 3)`, `${round(median(batched), 0)} msg/s`, `live one by one: ${round(median(live), 0)} msg/s`, `${round(median(batched) / median(live), 1)}x`],
      [`backfill of ${total} into 20 channels`, `${round(total / seedSeconds, 0)} msg/s`, `${round(seedSeconds, 1)} s`, ""],
      [`search, ${historyPlan.messages} history (baseline)`, `${baseline.p50} / ${baseline.p95} ms`, `${baseline.hits} hits`, "1.0x"],
      [`+ ${total} kept, reader of none`, `${none.p50} / ${none.p95} ms`, `${none.hits} hits`, `${round(none.p95 / baseline.p95, 2)}x p95`],
      [`+ ${total} kept, reader of 10 of 20 channels`, `${half.p50} / ${half.p95} ms`, `${half.hits} hits`, `${round(half.p95 / baseline.p95, 2)}x p95`],
      ...(real && realBaseline
        ? [
            [`realistic: LoCoMo questions, ${historyPlan.messages} history (baseline)`, `${realBaseline.p50} / ${realBaseline.p95} ms`, `${realBaseline.hits} hits`, "1.0x"],
            [`+ ${total} kept LoCoMo text, reader of none`, `${real.none.p50} / ${real.none.p95} ms`, `${real.none.hits} hits`, `${round(real.none.p95 / realBaseline.p95, 2)}x p95`],
            [`+ ${total} kept LoCoMo text, reader of 10 of 20`, `${real.half.p50} / ${real.half.p95} ms`, `${real.half.hits} hits`, `${round(real.half.p95 / realBaseline.p95, 2)}x p95`],
          ]
        : [[`realistic text: skipped, ${locomoAbsent()}`, "", "", ""]]),
    ];
    return {
      name: "knowledge",
      table: table(["measure", "figure", "beside it", "ratio"], rows),
      result: {
        provider: bench.provider,
        backfill: { messages: backfillCount, batchedPerSecond: batched.map((x) => round(x, 0)), livePerSecond: live.map((x) => round(x, 0)) },
        bulk: { messages: total, seconds: round(seedSeconds, 1) },
        search: { historyMessages: historyPlan.messages, kept: total, baseline, readerOfNone: none, readerOfHalf: half },
        realistic:
          real && realBaseline && data
            ? { conversations: data.conversations.length, turns: data.conversations.reduce((n, c) => n + c.turns.length, 0), queries: realQueries.length, keptSeconds: round(real.seconds, 1), baseline: realBaseline, readerOfNone: real.none, readerOfHalf: real.half }
            : { skipped: locomoAbsent() },
      },
    };
  } finally {
    await bench.close();
  }
}
