/** The skill library tools: skills_list, skill_view (progressive disclosure) and skill_manage. */
import { z } from "zod";
import { defineTool, ToolError, type Tool } from "./registry.ts";
import type { SkillStore } from "../skills/store.ts";
import type { Provenance } from "../memory/store.ts";
import type { ToolContext } from "./registry.ts";
import type { PatchInput, TextEdit } from "../skills/change.ts";
import { scanStored } from "../safety/scanner.ts";
import { createSkill, proposedChange, type SkillReach } from "./skill-reach.ts";

export type { SkillReach } from "./skill-reach.ts";

/** A stored text that matches a scanning rule written after it was saved is withheld from the model. */
function shown(text: string, what: string): string {
  const verdict = scanStored(text);
  return verdict.ok ? text : `[BLOCKED: ${verdict.reason}] The ${what} is withheld; it can be replaced or archived with skill_manage.`;
}

const provenance = (ctx: ToolContext, reason?: string): Provenance => ({
  source: ctx.source ?? "tool",
  actorId: ctx.scope.personId,
  sourceMessageId: ctx.sourceMessageId,
  // A review's own reason (which names it) comes first; the model's reason says why this change.
  reason: [ctx.reason, reason].filter(Boolean).join(": ") || null,
});

export function skillsListTool(store: SkillStore) {
  return defineTool({
    name: "skills_list",
    progress: "looking at skills",
    description: "List the skills (saved procedures) available here, with one-line descriptions.",
    input: z.object({}),
    async run(_args, ctx) {
      const skills = await store.list(ctx.scope);
      if (skills.length === 0) return "No skills yet. Create one with skill_manage when you work out a reusable procedure.";
      return skills
        .map((s) => `- ${s.name}${s.bundled ? " (bundled, read-only)" : s.scope !== "team" ? ` (${s.scope})` : ""}: ${s.description}`)
        .join("\n");
    },
  });
}

export function skillViewTool(store: SkillStore) {
  return defineTool({
    name: "skill_view",
    progress: "reading a skill",
    description:
      "Read a skill's SKILL.md (and the list of its support files), or one support file with `file`. Read a skill before following it.",
    input: z.object({
      name: z.string().min(1).max(64),
      file: z.string().max(200).optional().describe("a support file path such as references/api.md"),
    }),
    async run(args, ctx) {
      const skill = await store.find(ctx.scope, args.name);
      if (!skill) {
        const names = (await store.list(ctx.scope)).map((s) => s.name);
        throw new ToolError(`No skill named '${args.name}'. Available: ${names.join(", ") || "(none)"}.`);
      }
      if (args.file !== undefined) {
        const file = skill.files.find((f) => f.path === args.file);
        if (!file) {
          throw new ToolError(`'${args.name}' has no file '${args.file}'. Its files: ${skill.files.map((f) => f.path).join(", ") || "(none)"}.`);
        }
        return shown(file.content, `file ${file.path}`);
      }
      // A review reading a skill is not a use of it: use counts are what the curator keeps skills by.
      if (ctx.source !== "review") await store.markUsed(skill.id);
      const files = skill.files.length ? `\n\n---\nSupport files (read with file=...): ${skill.files.map((f) => f.path).join(", ")}` : "";
      return shown(skill.content, "SKILL.md") + files;
    },
  });
}

const manageInput = z
  .object({
    action: z.enum(["create", "patch", "edit", "write_file", "remove_file", "archive"]),
    name: z.string().min(1).max(64).describe("the skill's name (lowercase, digits, '.', '_' or '-')"),
    content: z
      .string()
      .optional()
      .describe("create/edit: the whole SKILL.md, YAML frontmatter (name, description) then a markdown body; write_file: the file's text"),
    old_string: z.string().optional().describe("patch: exact text to replace"),
    new_string: z.string().optional().describe("patch: replacement text"),
    replace_all: z.boolean().optional().describe("patch: replace every occurrence instead of requiring a unique match"),
    file_path: z
      .string()
      .optional()
      .describe("write_file/remove_file (and patch of a support file): a path under references/, templates/, scripts/ or assets/"),
    scope: z
      .enum(["team", "channel", "user"])
      .optional()
      .describe("create: who sees the skill; default team (the whole workspace; unless the speaker may share alone, kept here until a teammate approves: the result says)"),
    reason: z.string().max(500).optional().describe("why this change: kept in the skill's revision history"),
  })
  .superRefine((a, ctx) => {
    const need = (field: keyof typeof a, why: string) => {
      if (a[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `'${field}' is required for action '${a.action}' (${why})` });
    };
    if (a.action === "create" || a.action === "edit") need("content", "the whole SKILL.md");
    if (a.action === "patch") {
      need("old_string", "the exact text to replace");
      need("new_string", "the replacement");
    }
    if (a.action === "write_file") {
      need("file_path", "where the file goes");
      need("content", "the file's text");
    }
    if (a.action === "remove_file") need("file_path", "which file to remove");
  });

/** `reach`: where a shared write goes and the screen it passes (skill-reach.ts); without it, every write as asked. */
export function skillManageTool(store: SkillStore, reach: SkillReach | null = null) {
  return defineTool({
    name: "skill_manage",
    progress: "updating the skill library",
    description: [
      "Create and maintain skills: reusable procedures for a class of task (not records of one incident) that",
      "the whole team benefits from. create/edit take a full SKILL.md; patch replaces exact text; write_file /",
      "remove_file manage support files; archive retires a skill (nothing is ever deleted). Bundled skills are read-only.",
      "A team skill made or changed by most people waits for a teammate's approval (a new one is kept in this channel meanwhile): the result says where it went; tell the person plainly.",
    ].join(" "),
    input: manageInput,
    async run(a, ctx) {
      const result = await manage(store, reach, a, ctx);
      ctx.onWrite?.({ kind: "skill", action: a.action, name: result.name, proposalId: result.proposalId ?? null });
      return result.text;
    },
  });
}

type ManageArgs = z.infer<typeof manageInput>;

/** The edit a text-changing action makes (what a proposal would hold instead). */
function textEdit(a: ManageArgs): TextEdit | null {
  if (a.action === "edit") return { action: "edit", content: a.content ?? "" };
  if (a.action === "write_file") return { action: "write_file", path: a.file_path ?? "", content: a.content ?? "" };
  return a.action === "patch" ? { action: "patch", patch: patchOf(a) } : null;
}

const patchOf = (a: ManageArgs): PatchInput => ({ old_string: a.old_string ?? "", new_string: a.new_string ?? "", replace_all: a.replace_all ?? false, ...(a.file_path ? { file_path: a.file_path } : {}) });

async function manage(store: SkillStore, reach: SkillReach | null, a: ManageArgs, ctx: ToolContext): Promise<{ name: string; text: string; proposalId?: string }> {
  const prov = provenance(ctx, a.reason);
  const done = (text: string) => ({ name: a.name, text });
  if (a.action === "create") {
    const r = await createSkill(store, reach, ctx.scope, a.content ?? "", a.scope ?? "team", prov);
    const renamed = r.skill !== a.name ? ` (the name in its frontmatter; you passed '${a.name}')` : "";
    return { name: r.skill, text: renamed ? `${r.text}${renamed}` : r.text, ...(r.proposal ? { proposalId: r.proposal.id } : {}) };
  }
  const edit = textEdit(a);
  const proposed = edit ? await proposedChange(store, reach, ctx.scope, a.name, edit, prov) : null;
  if (proposed) return { name: proposed.skill, text: proposed.text, ...(proposed.proposal ? { proposalId: proposed.proposal.id } : {}) };
  switch (a.action) {
    case "edit":
      await store.edit(ctx.scope, a.name, a.content ?? "", prov);
      return done(`Rewrote SKILL.md of '${a.name}'. The previous text is kept in its revision history.`);
    case "patch":
      await store.patch(ctx.scope, a.name, patchOf(a), prov);
      return done(`Patched ${a.file_path ?? "SKILL.md"} of '${a.name}'.`);
    case "write_file":
      await store.writeFile(ctx.scope, a.name, a.file_path ?? "", a.content ?? "", prov);
      return done(`Wrote ${a.file_path} in '${a.name}'.`);
    case "remove_file":
      await store.removeFile(ctx.scope, a.name, a.file_path ?? "", prov);
      return done(`Removed ${a.file_path} from '${a.name}' (its text stays in the revision history).`);
    case "archive":
      await store.archive(ctx.scope, a.name, prov);
      return done(`Archived '${a.name}': it no longer appears in the index; its history is kept.`);
  }
}

export function skillTools(store: SkillStore, reach: SkillReach | null = null): Tool[] {
  return [skillsListTool(store), skillViewTool(store), skillManageTool(store, reach)] as Tool[];
}
