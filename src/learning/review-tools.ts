/**
 * The tools of a review: memory and the skill library only (the same tools a turn has, in the
 * conversation's scope, writing with provenance "review"), behind guards against over-saving. The
 * request lists the turn's tools, in the turn's order, so its prefix is the turns' cached one; any
 * other tool called in a review is refused with an error the model can act on. Guards:
 * - A cap on writes per review: each memory change and each skill_manage write counts; a call that
 *   would go past the cap is refused whole, with a note telling the model to stop.
 * - Team skills are not changed by a review. The skill library has no pending state, so the
 *   simplest honest record of such a change is a refusal the model reads ("do not retry") and a
 *   "suggested" line in the person's notice: a person who wants it asks cairn in a conversation.
 *   (Team memory and entries people wrote are held pending by MemoryStore.apply instead.)
 * - Once the job's lease is lost or the worker stops, nothing more is written.
 */
import { z } from "zod";
import { ToolError, ToolRegistry, type Tool, type ToolContext, type ToolCallObserver, type ToolWrite } from "../tools/registry.ts";
import { memoryTool } from "../tools/memory.ts";
import { skillManageTool, skillsListTool, skillViewTool } from "../tools/skills.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { Logger } from "../ground/log.ts";
import type { ReviewReport } from "./review-notice.ts";

/** What one review wrote and suggested; its `record` is the review's ToolContext.onWrite. */
export class ReviewLedger implements ReviewReport {
  readonly writes: ToolWrite[] = [];
  readonly proposals: { name: string; action: string }[] = [];

  constructor(readonly cap: number) {}

  get used(): number {
    return this.writes.length + this.proposals.length;
  }

  get left(): number {
    return Math.max(0, this.cap - this.used);
  }

  readonly record = (write: ToolWrite): void => {
    this.writes.push(write);
  };

  get pending(): number {
    return this.writes.filter((w) => w.kind === "memory" && w.pendingId !== null).length;
  }
}

const memoryCall = z.object({ operations: z.array(z.unknown()) });
const manageCall = z.object({ action: z.string(), name: z.string(), scope: z.string().optional() });

/** Writes a call would make at most: each memory operation, one per skill_manage call. */
export function plannedWrites(tool: string, input: unknown): number {
  if (tool === "memory") return memoryCall.safeParse(input).data?.operations.length ?? 0;
  return tool === "skill_manage" ? 1 : 0;
}

export interface ReviewToolDeps {
  memory: MemoryStore;
  skills: SkillStore;
  /** The turn's tools, in order (their definitions are sent); all but the review's own are refused. */
  turnTools?: readonly Tool[];
  ledger: ReviewLedger;
  signal: AbortSignal;
  log: Logger;
  /** Told of every call (the metrics count them). */
  onCall?: ToolCallObserver;
}

/** A registry of the turn's tools, in its order: the review's own four guarded, the others refused. */
export function reviewTools(deps: ReviewToolDeps): ToolRegistry {
  const own = [memoryTool(deps.memory) as Tool, skillsListTool(deps.skills) as Tool, skillViewTool(deps.skills) as Tool, skillManageTool(deps.skills) as Tool];
  const byName = new Map(own.map((t) => [t.name, guarded(t, deps)]));
  const listed = deps.turnTools?.length ? deps.turnTools : own;
  const tools = [...listed.map((t) => byName.get(t.name) ?? refused(t)), ...own.filter((t) => !listed.some((l) => l.name === t.name)).map((t) => byName.get(t.name)!)];
  return new ToolRegistry(
    tools,
    (err, tool) => deps.log.error({ err, tool }, "review tool failed unexpectedly"),
    deps.onCall,
  );
}

/** A turn's tool a review may not use: listed as it is (the same definition), refused when called. */
function refused(tool: Tool): Tool {
  return {
    ...tool,
    async run() {
      throw new ToolError(`${tool.name} is not available in a review: only memory, skills_list, skill_view and skill_manage are. Use those, or stop.`);
    },
  };
}

function guarded(tool: Tool, deps: ReviewToolDeps): Tool {
  return {
    ...tool,
    async run(input, ctx) {
      const planned = plannedWrites(tool.name, input);
      if (planned > 0) await admit(deps, tool.name, input, planned, ctx);
      return tool.run(input, ctx);
    },
  };
}

async function admit(deps: ReviewToolDeps, name: string, input: unknown, planned: number, ctx: ToolContext): Promise<void> {
  const { ledger } = deps;
  if (deps.signal.aborted) throw new ToolError(`This review was stopped. Nothing was saved. Stop now and reply "Done."`);
  if (ledger.left === 0) throw new ToolError(`This review has made ${ledger.cap} writes, the most one review may make. Nothing was saved. Stop now and reply "Done."`);
  if (planned > ledger.left) {
    throw new ToolError(`This review may make ${ledger.left} more write${ledger.left === 1 ? "" : "s"}, and this call has ${planned} operations. Nothing was saved. Keep the ${ledger.left} that matter most and call again.`);
  }
  if (name !== "skill_manage") return;
  const call = manageCall.parse(input);
  const team = call.action === "create" ? (call.scope ?? "team") === "team" : await isTeamSkill(deps.skills, ctx, call.name);
  if (!team) return;
  ledger.proposals.push({ name: call.name, action: call.action });
  throw new ToolError(
    `Not saved: '${call.name}' would be a team skill (everyone's), and a review cannot change team skills. ${ctx.speakerName} will be told you suggested it; do not retry this change.`,
  );
}

async function isTeamSkill(skills: SkillStore, ctx: ToolContext, name: string): Promise<boolean> {
  const skill = await skills.find(ctx.scope, name);
  return skill !== null && !skill.bundled && skill.scope === "team";
}
