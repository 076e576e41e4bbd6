/**
 * `npm run bench -- facts`: memory that stays true (issue 27) on a scripted team (lib/fact-script.ts):
 * 200 facts, each changed 1-3 times over 8 simulated weeks, by their author, by someone else in the
 * same place, or for the whole team over a channel's fact. Every write goes through MemoryStore and
 * the contradiction settling the job runs (learning/contradictions.ts), with a nominator scripted
 * from the answer key that errs at a set rate (misses a true contradiction, or names a wrong one);
 * a person answers "keep new" to 85% of the questions within 1-10 days, the rest stay open.
 * Measured at the end of every week, asking where the latest change was said:
 * - current only: the prompt's facts hold the current value and no other value of that subject;
 * - current, others disputed: the same, an outdated value allowed when marked DISPUTED;
 * - surfaced / silent: contradictions needing a person that were marked (asked) or left unmarked;
 * - before: "what was it before?" answered by memory_history's store with the previous value, of
 *   the subjects whose previous value is no longer in force (those still in force, disputed or
 *   missed, are counted apart: the prompt holds them).
 * The nominator is an interface (Nominator): a real model can be plugged in with modelNominator.
 */
import type { BenchOutcome } from "./run.ts";
import { openBenchDatabase } from "./lib/db.ts";
import { channelMessage } from "./lib/core.ts";
import { round, table } from "./lib/report.ts";
import { CHANNELS, factScript, PEOPLE, type FactScript, type Write } from "./lib/fact-script.ts";
import { prng } from "../test/support/scope-fuzz.ts";
import { HistoryStore, scopeOf } from "../src/history/store/store.ts";
import { MemoryError, MemoryStore } from "../src/memory/store.ts";
import { WORKSPACE_REACH } from "../src/memory/reach.ts";
import { ConflictStore, type MemoryEntry } from "../src/memory/conflict-store.ts";
import { MemoryHistoryStore } from "../src/memory/history-store.ts";
import { disputedIds } from "../src/memory/validity.ts";
import { sameScope, settleContradictions, type Nominator } from "../src/learning/contradictions.ts";
import type { Scope } from "../src/ground/types.ts";

const SUBJECTS = 200;
const WEEKS = 8;
const RATES = [0, 0.05, 0.1, 0.2, 0.4];
const RESOLVE_SHARE = 0.85;
const DAY = 86_400_000;
const START = Date.parse("2026-01-05T09:00:00Z");

interface Figures {
  errorRate: number;
  questions: number;
  currentOnly: number;
  currentOrDisputed: number;
  finalWeekCurrentOnly: number;
  needPerson: number;
  surfaced: number;
  silent: number;
  superseded: number;
  before: { asked: number; answered: number; inForce: number };
}

/** The answer key's nominator: the neighbours about the same subject, missed or mistaken at `rate`. */
function scriptedNominator(subjectOf: (text: string) => number | undefined, rate: number, seed: number): Nominator {
  const rand = prng(seed);
  return {
    async nominate(_workspaceId, text, existing) {
      const s = subjectOf(text);
      const truth = existing.filter((e) => subjectOf(e.text) === s && e.text !== text).map((e) => e.id);
      const named = truth.filter(() => rand() >= rate);
      const wrong = existing.filter((e) => !truth.includes(e.id));
      if (wrong.length && rand() < rate) named.push(wrong[Math.floor(rand() * wrong.length)]!.id);
      return named;
    },
  };
}

async function simulate(script: FactScript, rate: number): Promise<Figures> {
  const bench = await openBenchDatabase(`facts${Math.round(rate * 100)}`);
  try {
    const db = bench.database.prisma;
    const history = new HistoryStore(bench.database);
    let clock = new Date(START);
    const memory = new MemoryStore(db, { user: 1_000_000, channel: 1_000_000, team: 1_000_000 }, WORKSPACE_REACH, () => clock);
    const conflicts = new ConflictStore(db, memory);
    const earlier = new MemoryHistoryStore(db);

    const subjectByText = new Map(script.writes.map((w) => [w.text, w.subject]));
    const subjectOf = (t: string) => subjectByText.get(t);
    const nominator = scriptedNominator(subjectOf, rate, 17);
    const rand = prng(29);
    const scopes = new Map<string, Scope>();
    let seq = 0;
    const scopeAt = async (person: string, channel: string): Promise<Scope> => {
      const key = `${person}|${channel}`;
      let s = scopes.get(key);
      if (!s) scopes.set(key, (s = scopeOf(await history.resolve(channelMessage("facts-ws", person, channel, "", `m${++seq}`, clock)))));
      return s;
    };
    const pending: { at: number; newerId: string; person: string; channel: string }[] = [];
    const f: Figures = { errorRate: rate, questions: 0, currentOnly: 0, currentOrDisputed: 0, finalWeekCurrentOnly: 0, needPerson: 0, surfaced: 0, silent: 0, superseded: 0, before: { asked: 0, answered: 0, inForce: 0 } };
    const latest = new Map<number, Write>();
    const previous = new Map<number, Write>();

    const resolveDue = async (until: number) => {
      pending.sort((a, b) => a.at - b.at);
      while (pending.length && pending[0]!.at <= until) {
        const p = pending.shift()!;
        clock = new Date(p.at);
        const scope = await scopeAt(p.person, p.channel);
        const pair = await conflicts.pair(scope, p.newerId);
        if (pair) await conflicts.resolve(pair, "new", { source: "tool", actorId: scope.personId, sourceMessageId: null, at: clock });
      }
    };

    const write = async (w: Write) => {
      const scope = await scopeAt(w.person, w.channel);
      const prov = { source: "tool" as const, actorId: scope.personId, sourceMessageId: null, at: clock };
      const before = latest.get(w.subject);
      let outcome;
      try {
        outcome = w.replace && before ? await memory.apply(scope, [{ action: "replace", target: w.target, old_text: before.text, content: w.text }], prov) : null;
      } catch (err) {
        if (!(err instanceof MemoryError)) throw err;
      }
      outcome ??= await memory.apply(scope, [{ action: "add", target: w.target, content: w.text }], prov);
      if (before) previous.set(w.subject, before);
      latest.set(w.subject, w);
      for (const landed of outcome.writes.filter((x) => !x.pending)) {
        const entry = (await conflicts.entry(scope.workspaceId, landed.id))!;
        // What needs a person, by the answer key: active entries of the subject it overlaps, not its author's in its place.
        const overlapping = (await memory.visible(scope)).filter((e) => e.id !== entry.id && subjectOf(e.text) === w.subject);
        const mayReplace = (older: MemoryEntry) => sameScope(older, entry) && older.createdById === entry.createdById;
        const needs = overlapping.filter((e) => !mayReplace(e));
        const settled = await settleContradictions(conflicts, nominator, entry, scope.isDm ? null : scope.channelKey, mayReplace, clock);
        f.superseded += settled.superseded.length;
        f.needPerson += needs.length;
        for (const e of needs) {
          if (settled.disputed.includes(e.id)) f.surfaced++;
          else if (!settled.superseded.includes(e.id)) f.silent++;
        }
        if (settled.marked !== null && rand() < RESOLVE_SHARE) pending.push({ at: clock.getTime() + (1 + Math.floor(rand() * 10)) * DAY, newerId: entry.id, person: PEOPLE[Math.floor(rand() * PEOPLE.length)]!, channel: w.channel });
      }
    };

    const ask = async (week: number) => {
      let correct = 0;
      for (const [subject, w] of latest) {
        const scope = await scopeAt(PEOPLE[subject % PEOPLE.length]!, w.channel);
        const rows = (await memory.visible(scope)).filter((e) => e.kind === "fact" && subjectOf(e.text) === subject);
        const disputed = disputedIds(rows);
        const current = rows.some((e) => e.text === w.text);
        const others = rows.filter((e) => e.text !== w.text);
        f.questions++;
        if (current && others.length === 0) {
          f.currentOnly++;
          correct++;
        }
        if (current && others.every((e) => disputed.has(e.id) || (e.conflictWithId !== null && rows.some((r) => r.id === e.conflictWithId && r.text === w.text)))) f.currentOrDisputed++;
      }
      if (week === script.weeks - 1) f.finalWeekCurrentOnly = correct / Math.max(1, latest.size);
    };

    for (let week = 0; week < script.weeks; week++) {
      for (const w of script.writes.filter((x) => x.week === week)) {
        const at = START + (week * 7 + w.day) * DAY;
        await resolveDue(at);
        clock = new Date(at);
        await write(w);
      }
      const end = START + (week + 1) * 7 * DAY - 1;
      await resolveDue(end);
      clock = new Date(end);
      await ask(week);
    }
    // "What was it before?": the previous value, where the previous text was readable by whoever asks there.
    for (const [subject, prev] of previous) {
      const w = latest.get(subject)!;
      const scope = await scopeAt(PEOPLE[subject % PEOPLE.length]!, w.channel);
      if (prev.target === "channel" && prev.channel !== w.channel) continue;
      // Still in force (a dispute nobody answered yet, or one the nominator missed): in the prompt, not history.
      if ((await memory.visible(scope)).some((e) => e.text === prev.text)) {
        f.before.inForce++;
        continue;
      }
      f.before.asked++;
      const found = await earlier.earlier(scope, script.subjects[subject]!.topic, 20);
      if (found.some((r) => r.text === prev.text)) f.before.answered++;
    }
    return f;
  } finally {
    await bench.close();
  }
}

export async function run(): Promise<BenchOutcome> {
  const script = factScript(7, { subjects: SUBJECTS, weeks: WEEKS });
  const runs: Figures[] = [];
  for (const rate of RATES) runs.push(await simulate(script, rate));
  const pct = (a: number, b: number) => round((100 * a) / Math.max(1, b), 1);
  const rows = runs.map((r) => [
    `${Math.round(r.errorRate * 100)}%`,
    pct(r.currentOnly, r.questions),
    pct(r.currentOrDisputed, r.questions),
    round(100 * r.finalWeekCurrentOnly, 1),
    r.needPerson,
    pct(r.surfaced, r.needPerson),
    pct(r.silent, r.needPerson),
    r.superseded,
    pct(r.before.answered, r.before.asked),
    r.before.inForce,
  ]);
  const changes = script.writes.filter((w) => w.path !== "first");
  const header = `${SUBJECTS} facts, ${changes.length} changes over ${WEEKS} weeks (own ${changes.filter((w) => w.path === "own").length}, other person ${changes.filter((w) => w.path === "other").length}, team over a place ${changes.filter((w) => w.path === "team").length}); ${CHANNELS.length} channels, ${PEOPLE.length} people; ${Math.round(RESOLVE_SHARE * 100)}% of questions answered "keep new" in 1-10 days`;
  return {
    name: "facts",
    table: `${header}\n${table(["nominator error", "current only %", "current, others disputed %", "final week %", "needed a person", "surfaced %", "silent %", "superseded at once", "before answered %", "before still in force"], rows)}`,
    result: { subjects: SUBJECTS, weeks: WEEKS, changes: changes.length, runs },
  };
}
