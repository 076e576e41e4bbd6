/**
 * Prompt economy over a scripted 300-turn conversation (one DM session, a message a minute, the
 * Core's own compression at its default limits): input tokens per turn (characters / 4; no
 * tokenizer ships here), the share of each prompt that is byte-identical to the previous prompt's
 * start (what prompt caching can reuse), and the total against the baseline of sending the whole
 * history every turn (same system prompt and tools, measured on the same run).
 *
 * Provenance: what naming each shared item's teacher and date adds to a snapshot, per item, on a
 * workspace of typical size (20 facts, 4 team rules, 6 skills; names of 3 to 12 characters).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { openBenchDatabase } from "./lib/db.ts";
import { benchCore, benchSettings, channelMessage, replyText } from "./lib/core.ts";
import { fakeModel, lastUserText } from "./lib/model.ts";
import { rng } from "./lib/seed.ts";
import { mean, percentile, round, table } from "./lib/report.ts";
import type { BenchOutcome } from "./run.ts";
import { PROVENANCE_FRAMING, renderShared, type SharedSnapshotInput } from "../src/agent/prompt.ts";
import type { MemoryEntry } from "../src/memory/store.ts";

const TURNS = 300;
const TOPICS = ["the staging deploy", "the billing migration", "flaky e2e tests", "the on-call rota", "the Q3 roadmap", "API rate limits", "the design review", "customer onboarding"];

function userMessage(i: number, r: () => number): string {
  const topic = TOPICS[Math.floor(r() * TOPICS.length)]!;
  const detail = "We saw it again this morning after the last change, and I would like a second opinion before we touch it. ".repeat(1 + Math.floor(r() * 2));
  return `Turn ${i}: what should we do next about ${topic}? ${detail}`.trim();
}

function reply(i: number): string {
  return `For turn ${i}: start with the checklist, confirm the owner, then write down the decision in the channel so the team sees it. ` +
    "If the problem repeats, open an incident and link the runbook; if not, close the thread with a one-line summary of what changed and why.";
}

/** Serialized in the order the API caches a prompt: tools, then system, then messages. */
function serialize(req: Anthropic.MessageCreateParamsNonStreaming): string {
  return JSON.stringify({ tools: req.tools ?? [], system: req.system ?? [], messages: req.messages });
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The snapshot of a typical workspace rendered with and without its teachers: characters added. */
function provenanceCost(): { items: number; addedChars: number; perItem: number; snapshotGrowthPct: number; framingChars: number } {
  const names = ["Ana", "Bob Smith", "Chidi", "Dana Okafor", "Eun-ji Park", "Fatima"];
  const teachers = new Map(names.map((n, i) => [`p${i}`, n]));
  const at = (i: number) => new Date(Date.UTC(2026, 10, 1 + (i % 28), 9));
  const entry = (i: number, scope: string, kind = "fact"): MemoryEntry =>
    ({ id: `e${i}`, scope, kind, text: `${TOPICS[i % TOPICS.length]}: the agreed way, written down after the review ${i}`, createdById: `p${i % names.length}`, createdAt: at(i), quote: kind === "rule" ? "please always do it this way" : null }) as MemoryEntry;
  const team = Array.from({ length: 12 }, (_, i) => entry(i, "team"));
  const channel = Array.from({ length: 8 }, (_, i) => entry(20 + i, "channel"));
  const rules = Array.from({ length: 4 }, (_, i) => entry(40 + i, "team", "rule"));
  const skills = Array.from({ length: 6 }, (_, i) => ({ name: `procedure-${i}`, description: `Use when handling ${TOPICS[i]}`, createdById: `p${i % names.length}`, createdAt: at(i) }));
  const input: SharedSnapshotInput = {
    now: at(0),
    place: "channel C1 (slack; several people may take part)",
    blocks: [
      { target: "team", entries: team, used: 1_000, limit: 2_200 },
      { target: "channel", entries: channel, used: 700, limit: 1_500 },
    ],
    rules,
    skills,
  };
  const without = renderShared(input).length;
  const added = renderShared({ ...input, teachers }).length - without;
  const items = team.length + channel.length + rules.length + skills.length;
  return { items, addedChars: added, perItem: round(added / items, 1), snapshotGrowthPct: round((100 * added) / without, 1), framingChars: PROVENANCE_FRAMING.length + 3 };
}

export async function run(): Promise<BenchOutcome> {
  const bench = await openBenchDatabase("prompt");
  try {
    const settings = benchSettings();
    let clock = Date.parse("2026-03-02T09:00:00Z");
    const model = fakeModel(
      (req) => {
        if (req.model === settings.summaryModel) return { text: `Summary: the team discussed ${TOPICS.slice(0, 4).join(", ")}; decisions were recorded in the channel.` };
        const m = /^Turn (\d+)/.exec(lastUserText(req));
        return { text: reply(Number(m?.[1] ?? 0)) };
      },
      { record: true },
    );
    const core = await benchCore(bench.database, model, {}, () => new Date(clock));
    const r = rng(3);
    const turns: { main: Anthropic.MessageCreateParamsNonStreaming; history: number }[] = [];
    let historyChars = 0;
    for (let i = 1; i <= TURNS; i++) {
      const text = userMessage(i, r);
      const before = model.requests.length;
      const answer = await replyText(core, channelMessage("prompt-ws", "UALEX", "D-ALEX", text, `p-${i}`, new Date(clock), true));
      const main = model.requests.slice(before).filter((q) => q.model !== settings.summaryModel).at(-1);
      if (!main) throw new Error(`turn ${i}: no model request`);
      historyChars += text.length;
      turns.push({ main, history: historyChars });
      historyChars += answer.length;
      clock += 60_000;
    }
    const sizes = turns.map((t) => serialize(t.main));
    // The fixed part (tools, guidance, snapshot) is the same whichever way history is sent.
    const fixed = sizes.map((s, i) => s.length - JSON.stringify(turns[i]!.main.messages).length);
    const fullHistory = turns.map((t, i) => fixed[i]! + t.history);
    const tokens = sizes.map((s) => s.length / 4);
    const shares = sizes.slice(1).map((s, i) => commonPrefix(sizes[i]!, s) / s.length);
    const last = TURNS - 1;
    const historyNow = JSON.stringify(turns[last]!.main.messages).length;
    const result = {
      database: bench.provider,
      turns: TURNS,
      tokensPerTurn: { p50: round(percentile(tokens, 50), 0), max: round(Math.max(...tokens), 0), atTurn300: round(tokens[last]!, 0) },
      cacheStablePrefix: { mean: round(100 * mean(shares), 1), p10: round(100 * percentile(shares, 10), 1), min: round(100 * Math.min(...shares), 1), turnsBelow90: shares.filter((s) => s < 0.9).length },
      totalTokens: round(tokens.reduce((a, b) => a + b, 0), 0),
      baselineFullHistoryTokens: round(fullHistory.reduce((a, b) => a + b, 0) / 4, 0),
      totalVsBaseline: round(tokens.reduce((a, b) => a + b, 0) / (fullHistory.reduce((a, b) => a + b, 0) / 4), 3),
      contextAtTurn300: { historyChars: historyNow, fullHistoryChars: turns[last]!.history, share: round((100 * historyNow) / turns[last]!.history, 1) },
      provenance: provenanceCost(),
      settings: { historyCharLimit: settings.historyCharLimit, historyKeepMessages: settings.historyKeepMessages },
      goal: { cacheStablePrefix: ">= 90% on consecutive turns", contextAtTurn300: "<= 10% of full history" },
    };
    const text = [
      `prompt economy on ${bench.provider}: ${TURNS}-turn DM, compression at ${settings.historyCharLimit} chars keeping ${settings.historyKeepMessages} messages`,
      table(
        ["measure", "value"],
        [
          ["input tokens/turn p50 (chars/4)", result.tokensPerTurn.p50],
          ["input tokens at turn 300", result.tokensPerTurn.atTurn300],
          ["cache-stable prefix, mean %", result.cacheStablePrefix.mean],
          ["cache-stable prefix, p10 %", result.cacheStablePrefix.p10],
          ["turns with prefix < 90%", result.cacheStablePrefix.turnsBelow90],
          ["total input tokens", result.totalTokens],
          ["baseline: full history every turn", result.baselineFullHistoryTokens],
          ["total / baseline", result.totalVsBaseline],
          ["history sent at turn 300, % of full", result.contextAtTurn300.share],
          ["provenance: chars per shared item", result.provenance.perItem],
          ["provenance: snapshot growth, % (30 items)", result.provenance.snapshotGrowthPct],
          ["provenance: framing sentence, chars (once)", result.provenance.framingChars],
        ],
      ),
    ].join("\n");
    return { name: "prompt", table: text, result };
  } finally {
    await bench.close();
  }
}
