/**
 * The curator: a scheduled run over every workspace that keeps the agent's own skills and memory
 * tidy. Hermes' curator, with its users' complaints fixed (deleting skills, merging skills people
 * wanted, no way back).
 *
 * Invariants kept here (each proven by test/integration/curator.test.ts, named there):
 * - It never deletes. Archive is its strongest action; an archived skill or entry can be restored
 *   with `/cairn rollback` (curation-store.ts writes only status, text and flag updates and new skills).
 * - It touches only what the agent wrote on its own (policy.ts has the exact rules): pinned,
 *   bundled, imported and person-taught skills (learn, reaction) and entries people wrote are never
 *   changed. Merges happen only within one placement, so nothing private becomes shared.
 * - Every change is a revision with its reason and the run id; `/cairn history` lists them and
 *   `/cairn rollback <revision>` undoes one (src/commands/rollback.ts), itself as a new revision.
 * - A dry run plans the same way (model calls included) and reports what it would do; it writes nothing.
 * - The model never decides alone: candidates are chosen deterministically, its plan is validated
 *   and fails closed (dropped whole), a merge losing more than a quarter of its steps is rejected,
 *   and contradictions are flagged for a person, never resolved. At most two model calls per
 *   workspace per run (skills, memory), none when there are no candidates.
 * - It posts nothing: the weekly report summarizes; a line per workspace goes to the log.
 */
import type { LearningContext } from "../learning/context.ts";
import type { WorkspaceScope } from "../ground/scope.ts";
import { errText } from "../ground/log.ts";
import type { CurationStore } from "./curation-store.ts";
import { ask } from "./ask.ts";
import { memoryCandidates, skillGroups } from "./candidates.ts";
import { countChanges, describeChange, type Change, type Counts } from "./changes.ts";
import { loadLibrary, placementKey, type Library } from "./library.ts";
import { planLifecycle } from "./lifecycle.ts";
import { labels, MEMORY_SYSTEM, memoryPrompt, validateMemoryPlan } from "./memory-plan.ts";
import { SKILL_SYSTEM, skillPrompt, validateSkillPlan, type PlanOutcome } from "./skill-plan.ts";
import { kindOf, usedChars } from "../memory/store.ts";

/** What a curator run needs: its store (which also drops the caches it makes stale), the model, settings and log. */
export interface CuratorContext extends Pick<LearningContext, "model" | "reviewModel" | "settings" | "log" | "now"> {
  curation: CurationStore;
}

export interface CuratorRun {
  runId: string;
  dryRun: boolean;
  now: Date;
  signal?: AbortSignal;
}

export interface WorkspaceOutcome {
  workspaceId: string;
  /** Everything planned (a dry run's report). */
  planned: Change[];
  applied: Change[];
  /** Planned but left out at apply time: the item changed meanwhile. */
  skipped: Change[];
  /** Plans dropped whole (fail closed), and merges rejected on their own. */
  dropped: string[];
  rejected: string[];
  modelCalls: number;
}

export interface CuratorOutcome {
  runId: string;
  dryRun: boolean;
  workspaces: WorkspaceOutcome[];
  failed: string[];
}

const SKILL_MAX_TOKENS = 4_096;
const MEMORY_MAX_TOKENS = 2_048;

export async function runCurator(ctx: CuratorContext, run: CuratorRun): Promise<CuratorOutcome> {
  const workspaces = await ctx.curation.workspaces();
  const outcome: CuratorOutcome = { runId: run.runId, dryRun: run.dryRun, workspaces: [], failed: [] };
  for (const scope of workspaces) {
    const id = scope.workspaceId;
    if (run.signal?.aborted) break;
    try {
      const w = await curateWorkspace(ctx, scope, run);
      outcome.workspaces.push(w);
      const counts = countChanges(run.dryRun ? w.planned : w.applied);
      ctx.log.info({ workspace: id, run: run.runId, dryRun: run.dryRun, ...counts, skipped: w.skipped.length, dropped: w.dropped, rejected: w.rejected, modelCalls: w.modelCalls }, "curator pass over a workspace");
    } catch (err) {
      outcome.failed.push(id);
      ctx.log.warn({ workspace: id, run: run.runId, err: errText(err) }, "curator pass over a workspace failed");
    }
  }
  return outcome;
}

export async function curateWorkspace(ctx: CuratorContext, scope: WorkspaceScope, run: CuratorRun): Promise<WorkspaceOutcome> {
  const { workspaceId } = scope;
  const lib = await loadLibrary(ctx.curation, scope);
  const out: WorkspaceOutcome = { workspaceId, planned: [], applied: [], skipped: [], dropped: [], rejected: [], modelCalls: 0 };
  const lifecycle = planLifecycle(lib, ctx.settings.learning.curator, run.now);
  // What this run archives is not offered for merging.
  const gone = new Set(lifecycle.flatMap((c) => (c.type === "skill_status" && c.action === "archive" ? [c.skillId] : c.type === "lesson_archive" ? [c.entryId] : [])));
  out.planned.push(...lifecycle);
  const take = (plan: PlanOutcome, what: string) => {
    if (!plan.ok) {
      out.dropped.push(`${what}: ${plan.dropped}`);
      ctx.log.warn({ workspace: workspaceId, run: run.runId, why: plan.dropped }, `the curator's ${what} plan was dropped; nothing of it applied`);
      return;
    }
    out.planned.push(...plan.changes);
    out.rejected.push(...plan.rejected);
  };
  const groups = skillGroups(lib, gone);
  if (groups.length) {
    out.modelCalls++;
    take(await planned(() => ask(ctx, workspaceId, SKILL_SYSTEM, skillPrompt(groups), SKILL_MAX_TOKENS, run.signal), (r) => validateSkillPlan(r, groups, lib)), "skills");
  }
  const candidates = memoryCandidates(lib, ctx.settings.budgets, gone);
  if (candidates.groups.length || candidates.pairs.length) {
    const l = labels(candidates);
    out.modelCalls++;
    take(await planned(() => ask(ctx, workspaceId, MEMORY_SYSTEM, memoryPrompt(candidates, l, ctx.settings.budgets, hotUsed(lib)), MEMORY_MAX_TOKENS, run.signal), (r) => validateMemoryPlan(r, candidates, l)), "memory");
  }
  if (run.dryRun) return out;
  for (const change of out.planned) {
    if (run.signal?.aborted) break;
    if (await ctx.curation.apply(scope, change, { runId: run.runId, at: run.now })) out.applied.push(change);
    else out.skipped.push(change);
  }
  return out;
}

/** A model call's plan; a failed call is a dropped plan (nothing changes), like an invalid one. */
async function planned(call: () => Promise<string>, validate: (reply: string) => PlanOutcome): Promise<PlanOutcome> {
  let reply: string;
  try {
    reply = await call();
  } catch (err) {
    return { ok: false, dropped: `the model call failed (${errText(err)})` };
  }
  return validate(reply);
}

/** The characters an entry's block spends on facts and rules (what the budget counts). */
function hotUsed(lib: Library): (e: { scope: string; ownerId: string | null; channelKey: string | null }) => number {
  return (e) => usedChars(lib.entries.filter((x) => placementKey(x) === placementKey(e) && kindOf(x) !== "lesson").map((x) => x.text));
}

const COUNT_WORDS: [keyof Counts, string][] = [
  ["stale", "skills marked stale"],
  ["archived", "skills archived"],
  ["reactivated", "skills reactivated"],
  ["skillMerges", "skill merges"],
  ["lessonsArchived", "lessons archived"],
  ["memoryMerges", "memory merges"],
  ["flagged", "entries flagged"],
];

const LISTED = 10;

/** The run's short summary (the job's result; the weekly report has the detail). */
export function summarize(o: CuratorOutcome): string {
  const all = o.workspaces.flatMap((w) => (o.dryRun ? w.planned : w.applied));
  const counts = countChanges(all);
  const done = COUNT_WORDS.filter(([k]) => counts[k] > 0).map(([k, words]) => `${counts[k]} ${words}`);
  const dropped = o.workspaces.flatMap((w) => w.dropped);
  const rejected = o.workspaces.flatMap((w) => w.rejected);
  const skipped = o.workspaces.reduce((n, w) => n + w.skipped.length, 0);
  const tail = [
    ...(dropped.length ? [`${dropped.length} model plan(s) dropped: ${dropped.join("; ")}`] : []),
    ...(rejected.length ? [rejected.join("; ")] : []),
    ...(skipped ? [`${skipped} change(s) skipped: the items changed meanwhile`] : []),
    ...(o.failed.length ? [`${o.failed.length} workspace(s) failed`] : []),
  ];
  const head = `curator ${o.dryRun ? "dry run" : "run"} ${o.runId} over ${o.workspaces.length} workspace(s)`;
  if (o.dryRun) {
    const lines = all.slice(0, LISTED).map(describeChange);
    const more = all.length > LISTED ? [`and ${all.length - LISTED} more`] : [];
    const would = lines.length ? `would ${[...lines, ...more].join("; ")}` : "would change nothing";
    return [`${head}, nothing changed: ${would}`, ...tail].join(". ");
  }
  return [`${head}: ${done.length ? done.join(", ") : "nothing to do"}`, ...tail].join(". ");
}
