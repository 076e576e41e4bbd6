/** The `memory` tool: add / replace / remove entries of the speaker's profile, this channel, or the team. */
import { z } from "zod";
import { defineTool } from "./registry.ts";
import { budgetHeader, MemoryError, type MemoryOp, type MemoryStore } from "../memory/store.ts";
import { cleanForWrite } from "../memory/entries.ts";
import { NO_SCREEN, type WriteScreen } from "../safety/screen.ts";

const operation = z
  .object({
    action: z.enum(["add", "replace", "remove"]).describe("add a new entry, replace one entry, or remove one entry"),
    target: z
      .enum(["user", "channel", "team"])
      .describe("user = the speaker's own private profile; channel = this channel only; team = everyone in this workspace (unless the speaker may share alone, kept here until a teammate approves: the result says)"),
    content: z.string().max(1000).optional().describe("the entry text, for add and replace: one short declarative fact, or for a lesson one rule"),
    kind: z
      .enum(["fact", "lesson"])
      .optional()
      .describe("for add: fact (default) is shown in every prompt of the target; lesson is a correction or convention, shown only with messages it is relevant to"),
    old_text: z.string().max(1000).optional().describe("for replace and remove: a substring that appears in exactly one current entry"),
  })
  .superRefine((op, ctx) => {
    if ((op.action === "add" || op.action === "replace") && op.content === undefined) {
      ctx.addIssue({ code: "custom", path: ["content"], message: `'content' is required for action '${op.action}'` });
    }
    if ((op.action === "replace" || op.action === "remove") && op.old_text === undefined) {
      ctx.addIssue({ code: "custom", path: ["old_text"], message: `'old_text' is required for action '${op.action}'` });
    }
  });

const input = z.object({
  operations: z.array(operation).min(1).max(20).describe("applied in order, all or nothing"),
});

function toOp(o: z.infer<typeof operation>): MemoryOp {
  if (o.action === "add") return { action: "add", target: o.target, content: o.content ?? "", ...(o.kind ? { kind: o.kind } : {}) };
  if (o.action === "replace") return { action: "replace", target: o.target, old_text: o.old_text ?? "", content: o.content ?? "" };
  return { action: "remove", target: o.target, old_text: o.old_text ?? "" };
}

/** Who will see a write once it is in force: a profile is the speaker's alone and is not screened. */
function reachOf(op: MemoryOp): string | null {
  if (op.action === "remove" || op.target === "user") return null;
  return op.target === "team" ? "everyone in the workspace" : "everyone in this channel";
}

/**
 * The model-judged screen on every shared add or replace, in parallel, after the patterns: a block
 * refuses the batch with the reason; a hold is handed to the store, which keeps that entry out of
 * every prompt until a teammate releases it.
 */
async function screened(screen: WriteScreen, workspaceId: string, ops: readonly MemoryOp[]): Promise<Map<number, string>> {
  const verdicts = await Promise.all(
    ops.map(async (op, i) => {
      const reach = reachOf(op);
      if (!reach || op.action === "remove" || !op.content.trim()) return null;
      // The patterns first (a block there is the store's to report); the screen reads the redacted text.
      let text: string;
      try {
        text = cleanForWrite(op.content.trim(), "").text;
      } catch {
        return null;
      }
      return { i, verdict: await screen.judge({ workspaceId, text, reach }) };
    }),
  );
  const held = new Map<number, string>();
  for (const v of verdicts) {
    if (!v || v.verdict.verdict === "allow") continue;
    const where = ops.length > 1 ? `Operation ${v.i + 1}: ` : "";
    if (v.verdict.verdict === "block") throw new MemoryError(`${where}Blocked by the safety screen: ${v.verdict.reason}. Nothing was saved. Memory holds facts and procedures for the team, not instructions about how to treat people.`);
    held.set(v.i, v.verdict.reason);
  }
  return held;
}

export function memoryTool(store: MemoryStore, screen: WriteScreen = NO_SCREEN) {
  return defineTool({
    name: "memory",
    description: [
      "Save durable facts so they are remembered in future conversations: the speaker's preferences and",
      "background (target user, private to them), conventions of this channel (channel), or facts and",
      "decisions for the whole workspace (team). Save only what will still matter next week; never secrets.",
      "Each target has a character budget shown in your system prompt; when near full, consolidate with",
      "replace/remove in the same batch. Operations in one call are applied all-or-nothing.",
      "Saved facts appear in the prompt from the next session on.",
      "A team write by most people reaches only the place it was said (this channel, or in a DM their own profile) until a teammate approves it: the result says where it went; tell the person plainly.",
      "When someone states how things are done here, add it with kind 'lesson' (a correction of an answer of yours goes to record_correction instead): lessons do not",
      "use the budget and are shown with later messages they are relevant to, so word them with the terms people will use.",
    ].join(" "),
    progress: "saving to memory",
    input,
    async run(args, ctx) {
      const source = ctx.source ?? "tool";
      const prov = { source, actorId: ctx.scope.personId, sourceMessageId: ctx.sourceMessageId, reason: ctx.reason ?? null };
      // A review's writes are held for the person where they touch the team or what a person wrote (MemoryStore.apply).
      const ops = args.operations.map(toOp);
      const held = await screened(screen, ctx.scope.workspaceId, ops);
      const outcome = await store.apply(ctx.scope, ops, prov, { review: source === "review", ...(held.size ? { held } : {}) });
      for (const w of outcome.writes) {
        ctx.onWrite?.({ kind: "memory", action: w.action, target: w.target, entryKind: w.kind, text: w.text, pendingId: w.pending ? w.id : null });
      }
      const usage = outcome.usage.map((u) => `${u.target} memory: ${u.count} entries ${budgetHeader(u.used, u.limit)}${u.lessons ? `, ${u.lessons} lessons` : ""}`);
      return [outcome.changed > 0 ? "Saved." : "Nothing changed.", ...outcome.lines, ...usage].join("\n");
    },
  });
}
