/**
 * The tools of a review: memory and the skill library only (the same tools a turn has, in the
 * conversation's scope, writing with provenance "review"), behind guards against over-saving. The
 * request lists the turn's tools, in the turn's order, so its prefix is the turns' cached one; any
 * other tool called in a review is refused with an error the model can act on. Guards:
 * - A cap on writes per review: each memory change and each skill_manage write counts; a call that
 *   would go past the cap is refused whole, with a note telling the model to stop.
 * - Team skills are not changed by a review. An edit of one (edit, patch, write_file: levels 1-3
 *   of the update chain) in a shared conversation is kept as a proposal with its exact text
 *   (src/skills/proposal-store.ts), posted after the review for a teammate to approve
 *   (skill-proposals.ts); the tool result tells the model it was proposed, not applied. Anything
 *   else on a team skill (create, archive, remove_file), and any change from a DM (where nobody but
 *   its owner could approve it), is refused, reported as a suggestion in the person's notice.
 *   (Team memory and entries people wrote are held pending by MemoryStore.apply instead.)
 * - Once the job's lease is lost or the worker stops, nothing more is written.
 */
import { z } from "zod";
import { ToolError, ToolRegistry, type Tool, type ToolContext, type ToolCallObserver, type ToolWrite } from "../tools/registry.ts";
import { memoryTool } from "../tools/memory.ts";
import { skillManageTool, skillsListTool, skillViewTool } from "../tools/skills.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { SkillStore, SkillWithFiles } from "../skills/store.ts";
import type { SkillProposal, SkillProposalStore } from "../skills/proposal-store.ts";
import { textChange, type TextEdit } from "../skills/change.ts";
import type { Logger } from "../ground/log.ts";
import type { ReviewReport } from "./review-notice.ts";
import { NO_SCREEN, type WriteScreen } from "../safety/screen.ts";
import { WORKSPACE_REACH } from "../memory/reach.ts";

/** What one review wrote and suggested; its `record` is the review's ToolContext.onWrite. */
export class ReviewLedger implements ReviewReport {
  readonly writes: ToolWrite[] = [];
  /** Team skill changes refused (suggestions). */
  readonly proposals: { name: string; action: string }[] = [];
  /** Team skill changes kept as proposals, posted once the review ends. */
  readonly proposed: SkillProposal[] = [];

  constructor(readonly cap: number) {}

  get used(): number {
    return this.writes.length + this.proposals.length + this.proposed.length;
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
const manageCall = z.object({
  action: z.string(),
  name: z.string(),
  scope: z.string().optional(),
  content: z.string().optional(),
  old_string: z.string().optional(),
  new_string: z.string().optional(),
  replace_all: z.boolean().optional(),
  file_path: z.string().optional(),
  reason: z.string().optional(),
});

/** Writes a call would make at most: each memory operation, one per skill_manage call. */
export function plannedWrites(tool: string, input: unknown): number {
  if (tool === "memory") return memoryCall.safeParse(input).data?.operations.length ?? 0;
  return tool === "skill_manage" ? 1 : 0;
}

export interface ReviewToolDeps {
  memory: MemoryStore;
  skills: SkillStore;
  /** Where a change to a team skill is kept until a teammate approves it. */
  proposals: SkillProposalStore;
  /** The turn's tools, in order (their definitions are sent); all but the review's own are refused. */
  turnTools?: readonly Tool[];
  /** The screen a shared memory write passes (none: the patterns only). */
  screen?: WriteScreen;
  ledger: ReviewLedger;
  signal: AbortSignal;
  log: Logger;
  /** Told of every call (the metrics count them). */
  onCall?: ToolCallObserver;
}

/** A registry of the turn's tools, in its order: the review's own four guarded, the others refused. */
export function reviewTools(deps: ReviewToolDeps): ToolRegistry {
  // Team skills' reach is decided by the guard below (admit); the tool screens the review's channel skill writes.
  const reach = { reachOf: WORKSPACE_REACH, proposals: deps.proposals, screen: deps.screen ?? NO_SCREEN };
  const own = [memoryTool(deps.memory, deps.screen) as Tool, skillsListTool(deps.skills) as Tool, skillViewTool(deps.skills) as Tool, skillManageTool(deps.skills, reach) as Tool];
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
      const instead = planned > 0 ? await admit(deps, tool.name, input, planned, ctx) : null;
      return instead ?? tool.run(input, ctx);
    },
  };
}

/** Refuses a call the guards forbid; a result to return instead of running it (a proposal), or null to run it. */
async function admit(deps: ReviewToolDeps, name: string, input: unknown, planned: number, ctx: ToolContext): Promise<string | null> {
  const { ledger } = deps;
  if (deps.signal.aborted) throw new ToolError(`This review was stopped. Nothing was saved. Stop now and reply "Done."`);
  if (ledger.left === 0) throw new ToolError(`This review has made ${ledger.cap} writes, the most one review may make. Nothing was saved. Stop now and reply "Done."`);
  if (planned > ledger.left) {
    throw new ToolError(`This review may make ${ledger.left} more write${ledger.left === 1 ? "" : "s"}, and this call has ${planned} operations. Nothing was saved. Keep the ${ledger.left} that matter most and call again.`);
  }
  if (name !== "skill_manage") return null;
  const call = manageCall.parse(input);
  if (call.action === "create") return (call.scope ?? "team") === "team" ? suggest(ledger, ctx, call) : null;
  const skill = await deps.skills.find(ctx.scope, call.name);
  if (skill === null || skill.bundled || skill.scope !== "team") return null;
  const edit = textEditOf(call);
  if (!edit || ctx.scope.isDm) return suggest(ledger, ctx, call);
  return propose(deps, ctx, skill, edit, call.reason);
}

function suggest(ledger: ReviewLedger, ctx: ToolContext, call: z.infer<typeof manageCall>): never {
  ledger.proposals.push({ name: call.name, action: call.action });
  const why =
    call.action === "create"
      ? "would be a team skill (everyone's), and a review cannot change team skills"
      : `is a team skill (everyone's), and a review cannot ${ctx.scope.isDm ? "change one from a direct message" : `${call.action.replace("_", " ")} one`}`;
  throw new ToolError(`Not saved: '${call.name}' ${why}. ${ctx.speakerName} will be told you suggested it; do not retry this change.`);
}

/** The edits of a team skill a review may propose (levels 1-3): SKILL.md rewritten or patched, a support file written or patched. */
function textEditOf(call: z.infer<typeof manageCall>): TextEdit | null {
  if (call.action === "edit" && call.content !== undefined) return { action: "edit", content: call.content };
  if (call.action === "write_file" && call.file_path !== undefined && call.content !== undefined) return { action: "write_file", path: call.file_path, content: call.content };
  if (call.action !== "patch" || call.old_string === undefined || call.new_string === undefined) return null;
  return { action: "patch", patch: { old_string: call.old_string, new_string: call.new_string, replace_all: call.replace_all ?? false, ...(call.file_path ? { file_path: call.file_path } : {}) } };
}

/** Keeps the change as a proposal, checked as the skill store would check it (a refusal goes back to the model to fix). */
async function propose(deps: ReviewToolDeps, ctx: ToolContext, skill: SkillWithFiles, edit: TextEdit, why: string | undefined): Promise<string> {
  const change = textChange(skill, edit);
  // Named as the review's writes are, so a re-run of the review finds it (review.ts).
  const reason = [ctx.reason, why].filter(Boolean).join(": ") || "a review's change";
  const proposal = await deps.proposals.propose(ctx.scope, skill, change, reason);
  deps.ledger.proposed.push(proposal);
  return [
    `Proposed, not applied: '${skill.name}' is a team skill, so your change to ${change.path ?? "SKILL.md"} is kept as proposal ${proposal.id}.`,
    `It is posted in this conversation with its diff and applied when a teammate approves it. Do not retry this change or make it another way; go on with anything else, or stop.`,
  ].join(" ");
}
