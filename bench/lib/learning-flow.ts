/**
 * The learning loop end to end, as people use it: in one session someone asks, cairn answers
 * wrong, they react 👎, cairn asks what it should have done, they correct it, cairn answers again
 * and keeps the lesson, proposing it to the team; for half of the conventions a teammate approves
 * with ✅ and it becomes a team rule. Later sessions ask a related question in the same channel, in
 * another channel, and an unrelated one. Every message, reaction and post goes through the core's
 * delivery path on an in-memory platform (memory-platform.ts); jobs run on the core's worker.
 *
 * A: reactions and corrections teach nothing (no worker, no memory tool).  C: the whole loop.
 * T: the whole loop with corrections typed in words and no reaction ("That's wrong: ..."): the
 * model records each with its record_correction tool. The fake model answers right only when the
 * convention's text is in its prompt.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { Core } from "../../src/app/core.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { benchSettings } from "./core.ts";
import { openBenchDatabase } from "./db.ts";
import { fakeModel, lastUserText, promptText, type Reply } from "./model.ts";
import { MemoryPlatform } from "./memory-platform.ts";
import { round } from "./report.ts";

const CHANNELS = ["C-backend", "C-frontend", "C-data", "C-ops", "C-design"];
const PER_CHANNEL = 10;

interface Convention {
  id: number;
  channel: string;
  topic: string;
  text: string;
  /** A teammate approves its proposal (the other half stay channel lessons). */
  approved: boolean;
}

const CONVENTIONS: Convention[] = CHANNELS.flatMap((channel, c) =>
  Array.from({ length: PER_CHANNEL }, (_, k) => {
    const id = c * PER_CHANNEL + k;
    const topic = `topic${id}`;
    const text = k % 2 === 0 ? `Convention L${id}: to handle ${topic}, first run check-${id} then ask ${channel}.` : `Convention L${id}: ${topic} is owned by team-${id}.`;
    return { id, channel, topic, text, approved: k % 2 === 0 };
  }),
);

const conventionsIn = (text: string) => new Set([...text.matchAll(/Convention L(\d+):/g)].map((m) => Number(m[1])));

function respond(req: Anthropic.MessageCreateParamsNonStreaming): Reply {
  const system = typeof req.system === "string" ? req.system : (req.system ?? []).map((b) => b.text).join("\n");
  const user = lastUserText(req);
  if (system.startsWith("You turn a person's correction")) {
    const correction = /own words:\n([\s\S]*?)\n\nEarlier lessons/.exec(user)?.[1] ?? "";
    return { text: JSON.stringify({ rule: `ALWAYS remember: ${correction.replace(/^(No|That's wrong): /, "").trim()}`, same_as: null, contradicts: null }) };
  }
  if (user.includes("══ CORRECTION ══")) return { text: "Corrected, thanks." };
  // A correction typed in words: recorded with the tool, then answered with it applied.
  const last = req.messages.at(-1);
  if (last && typeof last.content !== "string" && last.content.some((b) => b.type === "tool_result")) return { text: "Corrected, thanks." };
  // The person's own words are the message's last block (lessons shown with it come before, and
  // quote earlier corrections).
  const texts = last && typeof last.content !== "string" ? last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])) : [user];
  const own = texts.at(-1) ?? "";
  if (/That's wrong: /.test(own)) return { toolUse: [{ name: "record_correction", input: { correction: "the convention" } }] };
  const asked = /about (topic\d+)/.exec(user)?.[1];
  const c = CONVENTIONS.find((x) => x.topic === asked);
  return { text: c && promptText(req).includes(`L${c.id}:`) ? `Right: ${c.text}` : "A guess." };
}

type Variant = "A" | "C" | "T";

export interface FlowResult {
  variant: Variant;
  sessions: number;
  questionsAsked: number;
  lessons: number;
  rules: number;
  repeatedMistakeRate: number;
  lessonRecall: number;
  /** Approved conventions answered right in another channel. */
  rulesReachOtherChannels: number;
  /** Unapproved channel lessons seen in another channel's prompt (must be 0). */
  channelLessonLeaks: number;
  /** Of the cold lessons shown, the share the question did not need (rules are hot by design). */
  pollution: number;
  rulesPerPrompt: number;
}

async function runFlow(variant: Variant): Promise<FlowResult> {
  const bench = await openBenchDatabase(`flow${variant}`);
  try {
    const model = fakeModel(respond, { record: true });
    const settings = benchSettings({ bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0 } });
    const core = new Core({ database: bench.database, model, settings, log: silentLogger });
    const chat = new MemoryPlatform("T-flow");
    await chat.start(core.attach(chat));
    const learn = () => (variant !== "A" ? core.learning.drain() : Promise.resolve());
    let sessions = 0;
    for (const c of CONVENTIONS) {
      const asked = await chat.say("ann", c.channel, `What do we do about ${c.topic}?`);
      sessions++;
      if (variant === "T") {
        await chat.say("ann", c.channel, `That's wrong: ${c.text}`, asked.message.id);
      } else {
        await chat.react("ann", asked.replies.at(-1)!, "-1");
        await learn();
        await chat.say("ann", c.channel, `No: ${c.text}`, asked.message.id);
      }
      await learn();
      const proposal = chat.cairnSaid(c.channel, asked.message.id, "React ✅");
      if (proposal && c.approved) {
        await chat.react("bo", proposal, "white_check_mark");
        await learn();
      }
    }
    const later: { c: Convention; where: "same" | "other" | "unrelated"; right: boolean; shown: Set<number>; rules: Set<number> }[] = [];
    const lessonIds = new Set((await bench.database.prisma.memoryEntry.findMany({ where: { kind: "lesson" }, select: { text: true } })).flatMap((e) => [...conventionsIn(e.text)]));
    for (const c of CONVENTIONS) {
      const other = CHANNELS[(CHANNELS.indexOf(c.channel) + 1) % CHANNELS.length]!;
      for (const [where, channel, q] of [["same", c.channel, `Remind me about ${c.topic}?`], ["other", other, `Remind me about ${c.topic}?`], ["unrelated", c.channel, "What time is the all-hands?"]] as const) {
        const before = model.requests.length;
        const said = await chat.say("cy", channel, q);
        sessions++;
        const requests = model.requests.slice(before);
        const system = requests.map((r) => (typeof r.system === "string" ? r.system : (r.system ?? []).map((b) => b.text).join("\n"))).join("\n");
        const messages = requests.map((r) => JSON.stringify(r.messages)).join("\n");
        later.push({ c, where, right: said.replies.some((m) => m.text.startsWith("Right:")), shown: conventionsIn(messages), rules: conventionsIn(system) });
      }
    }
    const same = later.filter((l) => l.where === "same");
    const other = later.filter((l) => l.where === "other");
    const approvedOther = other.filter((l) => l.c.approved);
    const shown = later.reduce((n, l) => n + l.shown.size, 0);
    const needed = (l: (typeof later)[number]) => (l.where === "unrelated" ? -1 : l.c.id);
    const irrelevant = later.reduce((n, l) => n + [...l.shown].filter((id) => id !== needed(l)).length, 0);
    const rules = await bench.database.prisma.memoryEntry.count({ where: { kind: "rule", status: "active" } });
    return {
      variant,
      sessions,
      questionsAsked: await bench.database.prisma.correction.count(),
      lessons: lessonIds.size,
      rules,
      repeatedMistakeRate: round((100 * same.filter((l) => !l.right).length) / same.length, 1),
      lessonRecall: round((100 * same.filter((l) => l.shown.has(l.c.id) || l.rules.has(l.c.id)).length) / same.length, 1),
      rulesReachOtherChannels: round((100 * approvedOther.filter((l) => l.right).length) / approvedOther.length, 1),
      channelLessonLeaks: other.filter((l) => !l.c.approved && (l.shown.has(l.c.id) || l.right)).length,
      pollution: shown === 0 ? 0 : round((100 * irrelevant) / shown, 1),
      rulesPerPrompt: round(later.reduce((n, l) => n + l.rules.size, 0) / later.length, 1),
    };
  } finally {
    await bench.close();
  }
}

export async function runLearningFlow(): Promise<{ runs: FlowResult[]; mistakesCut: number; typedMistakesCut: number }> {
  const a = await runFlow("A");
  const c = await runFlow("C");
  const t = await runFlow("T");
  const cut = (x: FlowResult) => (a.repeatedMistakeRate === 0 ? 0 : round(100 * (1 - x.repeatedMistakeRate / a.repeatedMistakeRate), 1));
  return { runs: [a, c, t], mistakesCut: cut(c), typedMistakesCut: cut(t) };
}
