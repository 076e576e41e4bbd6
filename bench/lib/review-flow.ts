/**
 * The background review at work: people talk with cairn (in DMs and channel threads), now and then
 * saying something worth keeping (a preference of their own, a team decision) among small talk.
 * Every 10th message of a conversation queues a memory review (the production default), run on the
 * core's worker after the reply. The fake review model saves what the last ten messages stated and
 * nothing else; the figures are what cairn's guards make of that: writes per 100 turns, and the
 * share held pending until a person confirms (team facts, changes to what a person wrote).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { Core } from "../../src/app/core.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { benchSettings } from "./core.ts";
import { openBenchDatabase } from "./db.ts";
import { fakeModel, lastUserText, type Reply } from "./model.ts";
import { MemoryPlatform } from "./memory-platform.ts";
import { round } from "./report.ts";

const PEOPLE = ["ann", "bo", "cy", "dee", "eli"];
const TURNS = 30;

/** What person `p` says at turn `t`: a statement worth keeping every few turns, small talk otherwise. */
function line(p: number, t: number): string {
  if (t % 7 === 3) return `I prefer answers as short bullet lists, note ${p}-${t}.`;
  if (t % 11 === 5) return `The team decided that service-${p}-${t} is owned by the platform group.`;
  return `thanks, what about item ${p}-${t}?`;
}

function respond(req: Anthropic.MessageCreateParamsNonStreaming): Reply {
  const last = lastUserText(req);
  const afterTool = req.messages.at(-1)?.content instanceof Array && (req.messages.at(-1)!.content as { type: string }[]).some((b) => b.type === "tool_result");
  if (!last.includes("MEMORY REVIEW") && !last.includes("SKILL REVIEW")) return { text: "ok" };
  if (afterTool) return { text: "Done." };
  // The review sees the conversation: it saves what the last ten person messages stated.
  const said = req.messages.flatMap((m) => (m.role === "user" && Array.isArray(m.content) ? m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])) : [])).join("\n");
  const recent = said.split("\n").slice(-40).join("\n");
  const ops = [
    ...[...recent.matchAll(/I prefer ([^\n]*?), note/g)].slice(-1).map((m) => ({ action: "add", target: "user", content: `Prefers ${m[1]}.` })),
    ...[...recent.matchAll(/The team decided that ([^\n]*?)\./g)].slice(-1).map((m) => ({ action: "add", target: "team", content: `${m[1]}.` })),
  ];
  return ops.length ? { toolUse: [{ name: "memory", input: { operations: ops } }] } : { text: "Nothing to save." };
}

export interface ReviewFlowResult {
  turns: number;
  reviews: number;
  writes: number;
  writesPer100Turns: number;
  pendingShare: number;
  /** Review prompt tokens as a share of the turns' prompt tokens (estimated: 4 characters a token). */
  overheadShare: number;
  /** Of the reviews' prompt tokens, the share that is a prefix of a turn's request (what the prompt cache can serve). */
  reviewPrefixShare: number;
}

/** A request as the API's cache key reads it: tools, then system, then messages. */
const keyText = (r: Anthropic.MessageCreateParamsNonStreaming): string => `${JSON.stringify(r.tools ?? [])}${JSON.stringify(r.system ?? "")}${JSON.stringify(r.messages)}`;
const isReview = (r: Anthropic.MessageCreateParamsNonStreaming): boolean => JSON.stringify(r.messages).includes("REVIEW (from cairn itself");

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * What reviewing costs in prompt tokens, against the turns': each review request's text, and how
 * much of it is a prefix of a turn request sent before it (the prompt cache serves such a prefix,
 * within its lifetime, at a tenth of the price). Characters / 4 stand in for tokens.
 */
function reviewCost(requests: readonly Anthropic.MessageCreateParamsNonStreaming[]): { overheadShare: number; reviewPrefixShare: number } {
  let turnChars = 0;
  let reviewChars = 0;
  let prefixChars = 0;
  const turns: string[] = [];
  for (const r of requests) {
    const text = keyText(r);
    if (!isReview(r)) {
      turnChars += text.length;
      turns.push(text);
      continue;
    }
    reviewChars += text.length;
    // The conversation's turn requests share the longest prefix; the latest few are enough to look at.
    prefixChars += Math.max(0, ...turns.slice(-40).map((t) => commonPrefix(t, text)));
  }
  return { overheadShare: turnChars === 0 ? 0 : round((100 * reviewChars) / turnChars, 1), reviewPrefixShare: reviewChars === 0 ? 0 : round((100 * prefixChars) / reviewChars, 1) };
}

export async function runReviewFlow(): Promise<ReviewFlowResult> {
  const bench = await openBenchDatabase("review");
  try {
    const model = fakeModel(respond, { record: true });
    const settings = benchSettings({ bundledSkillsDir: null, learning: { reviewNotice: "brief" } });
    const core = new Core({ database: bench.database, model, settings, log: silentLogger });
    const chat = new MemoryPlatform("T-review");
    await chat.start(core.attach(chat));
    let turns = 0;
    for (const [p, person] of PEOPLE.entries()) {
      // One DM and one channel thread each.
      let thread: string | null = null;
      for (let t = 0; t < TURNS; t++) {
        await chat.say(person, "dm", line(p, t));
        const said = await chat.say(person, "C-team", line(p, t + 100), thread);
        thread ??= said.message.id;
        turns += 2;
        await core.learning.drain();
      }
    }
    const prisma = bench.database.prisma;
    const reviews = await prisma.job.count({ where: { kind: "review", status: "done" } });
    const written = await prisma.memoryEntry.findMany({ where: { source: "review" }, select: { status: true } });
    const pending = written.filter((e) => e.status === "pending").length;
    return {
      turns,
      reviews,
      writes: written.length,
      writesPer100Turns: round((100 * written.length) / turns, 1),
      pendingShare: written.length === 0 ? 0 : round((100 * pending) / written.length, 1),
      ...reviewCost(model.requests),
    };
  } finally {
    await bench.close();
  }
}
