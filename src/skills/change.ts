/**
 * A change to one text of a skill (its SKILL.md or a support file), computed and checked as the
 * skill store checks it, without writing: the store writes what these return, and a review's change
 * to a team skill is kept as a proposal of exactly that text (src/skills/proposal-store.ts), so an
 * approved proposal is never a change the store itself would have refused.
 */
import { parseSkillMd, validateSupportPath, type ParsedSkill } from "./skillmd.ts";
import { scanForWrite } from "../safety/scanner.ts";
import { UserFacingError } from "../ground/errors.ts";

export class SkillError extends UserFacingError {
  override name = "SkillError";
}

export const SKILL_MD_MAX_CHARS = 64 * 1024;
export const SUPPORT_FILE_MAX_CHARS = 256 * 1024;

export interface PatchInput {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  file_path?: string;
}

/** Every write from the agent is scanned first: threats are refused, secrets redacted. */
export function cleanOrThrow(text: string, what: string): string {
  const verdict = scanForWrite(text);
  if (!verdict.ok) throw new SkillError(`${what}: ${verdict.message}`);
  return verdict.text;
}

export function parseOrThrow(content: string): ParsedSkill {
  if (content.length > SKILL_MD_MAX_CHARS) {
    throw new SkillError(`SKILL.md is ${content.length} chars; the limit is ${SKILL_MD_MAX_CHARS}. Move detail into references/ files (write_file) and keep SKILL.md to the procedure.`);
  }
  const parsed = parseSkillMd(content);
  if (!parsed.ok) throw new SkillError(`${parsed.error}\nNothing was saved.`);
  return parsed.skill;
}

export function checkPath(filePath: string): string {
  const res = validateSupportPath(filePath);
  if (!res.ok) throw new SkillError(`${res.error}\nNothing was saved.`);
  return res.path;
}

/** Counts non-overlapping occurrences. */
function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** What a patch makes of `before` (`where` of skill `name`): refused when old_string is missing or matches more than once unasked. */
export function patchedText(before: string, input: PatchInput, where: string, name: string): string {
  if (input.old_string === "") throw new SkillError("old_string is empty: give the exact text to replace. Nothing was saved.");
  const count = occurrences(before, input.old_string);
  if (count === 0) {
    throw new SkillError(`old_string was not found in ${where} of '${name}'. Nothing was saved. View the current text with skill_view and copy old_string from it exactly (whitespace included).`);
  }
  if (count > 1 && !input.replace_all) {
    throw new SkillError(`old_string occurs ${count} times in ${where} of '${name}'. Nothing was saved. Include more surrounding text so it matches once, or set replace_all: true to change every occurrence.`);
  }
  return input.replace_all ? before.split(input.old_string).join(input.new_string) : before.replace(input.old_string, () => input.new_string);
}

/** A SKILL.md as the store would save it: scanned, parsed, its name unchanged. */
export function checkedSkillMd(skillName: string, raw: string): { content: string; description: string } {
  const content = cleanOrThrow(raw, "SKILL.md");
  const parsed = parseOrThrow(content);
  if (parsed.name !== skillName) {
    throw new SkillError(`The frontmatter name must stay '${skillName}' (renaming is not supported); got '${parsed.name}'. Nothing was saved.`);
  }
  return { content, description: parsed.description };
}

/** A support file's text as the store would save it: scanned, within its size. */
export function checkedFile(path: string, raw: string): string {
  const content = cleanOrThrow(raw, path);
  if (content.length > SUPPORT_FILE_MAX_CHARS) {
    throw new SkillError(`'${path}' is ${content.length} chars; the limit is ${SUPPORT_FILE_MAX_CHARS}. Split it into several files. Nothing was saved.`);
  }
  return content;
}

/** The edits of a skill's text that a review may propose for a team skill (levels 1-3 of the update chain). */
export type TextEdit = { action: "edit"; content: string } | { action: "patch"; patch: PatchInput } | { action: "write_file"; path: string; content: string };

/** One text of a skill before and after: `path` null for SKILL.md; `oldText` null for a file not there yet. */
export interface TextChange {
  path: string | null;
  oldText: string | null;
  newText: string;
}

export interface SkillText {
  name: string;
  content: string;
  files: readonly { path: string; content: string }[];
}

/** What `edit`, `patch` or `write_file` would make of the skill, checked as the store checks it; refused when it changes nothing. */
export function textChange(skill: SkillText, edit: TextEdit): TextChange {
  const change = compute(skill, edit);
  if (change.oldText === change.newText) throw new SkillError(`That leaves ${change.path ?? "SKILL.md"} of '${skill.name}' as it is. Nothing was saved.`);
  return change;
}

function compute(skill: SkillText, edit: TextEdit): TextChange {
  if (edit.action === "edit") return { path: null, oldText: skill.content, newText: checkedSkillMd(skill.name, edit.content).content };
  if (edit.action === "write_file") {
    const path = checkPath(edit.path);
    return { path, oldText: skill.files.find((f) => f.path === path)?.content ?? null, newText: checkedFile(path, edit.content) };
  }
  const path = edit.patch.file_path ? checkPath(edit.patch.file_path) : null;
  if (path === null) return { path, oldText: skill.content, newText: checkedSkillMd(skill.name, patchedText(skill.content, edit.patch, "SKILL.md", skill.name)).content };
  const file = skill.files.find((f) => f.path === path);
  if (!file) throw new SkillError(`'${skill.name}' has no file '${path}'. Its files: ${skill.files.map((f) => f.path).join(", ") || "(none)"}. Nothing was saved.`);
  return { path, oldText: file.content, newText: cleanOrThrow(patchedText(file.content, edit.patch, path, skill.name), path) };
}
