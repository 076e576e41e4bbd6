/**
 * Reads the skills that ship with cairn (the top-level `skills/` folder). They are ours, so any
 * malformed skill throws instead of being skipped: a broken bundled skill should fail the build,
 * not silently vanish from every workspace.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { contentHash, parseSkillMd, SUPPORT_DIRS, validateSupportPath } from "./skillmd.ts";
import type { SkillStore } from "./store.ts";
import type { Logger } from "../ground/log.ts";
import { scanStored } from "../safety/scanner.ts";

export interface BundledFile {
  path: string;
  content: string;
}

export interface BundledSkill {
  name: string;
  description: string;
  /** The full SKILL.md text, as stored in `Skill.content`. */
  content: string;
  /** Support files sorted by path. */
  files: BundledFile[];
  hash: string;
}

export const BUNDLED_FILE_MAX_BYTES = 256 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

async function readTextFile(absPath: string, label: string): Promise<string> {
  const info = await lstat(absPath);
  if (info.size > BUNDLED_FILE_MAX_BYTES) {
    throw new Error(`bundled skill file '${label}' is ${info.size} bytes; the limit is ${BUNDLED_FILE_MAX_BYTES}`);
  }
  const bytes = await readFile(absPath);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new Error(`bundled skill file '${label}' is not UTF-8 text`);
  }
  // Postgres text columns cannot hold NUL, and a NUL almost always means a binary file slipped in.
  if (text.includes("\0")) throw new Error(`bundled skill file '${label}' contains a NUL byte; only text files are allowed`);
  return text.replace(/^\uFEFF/, "");
}

/** Posix paths, relative to `root`, of the regular files under `root/rel`; dotfiles and dot-folders are skipped. */
async function walk(root: string, rel: string, label: string): Promise<string[]> {
  const entries = await readdir(join(root, rel), { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const childRel = `${rel}/${entry.name}`;
    if (entry.isSymbolicLink()) {
      // A link could point anywhere on the machine that builds the image; only real files ship.
      throw new Error(`bundled skill '${label}': '${childRel}' is a symbolic link; bundled skills must hold regular files`);
    }
    if (entry.isDirectory()) out.push(...(await walk(root, childRel, label)));
    else if (entry.isFile()) out.push(childRel);
  }
  return out;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

async function loadOne(skillDir: string, folder: string): Promise<BundledSkill> {
  const content = await readTextFile(join(skillDir, "SKILL.md"), `${folder}/SKILL.md`);
  const parsed = parseSkillMd(content);
  if (!parsed.ok) throw new Error(`bundled skill folder '${folder}' has an invalid SKILL.md: ${parsed.error}`);
  const { name, description } = parsed.skill;
  if (name !== folder) {
    throw new Error(`bundled skill folder '${folder}' holds a SKILL.md named '${name}'; the folder name must equal the frontmatter name`);
  }

  const paths: string[] = [];
  for (const dir of SUPPORT_DIRS) {
    if (await isDirectory(join(skillDir, dir))) paths.push(...(await walk(skillDir, dir, folder)));
  }

  const files: BundledFile[] = [];
  for (const rawPath of paths) {
    const checked = validateSupportPath(rawPath);
    if (!checked.ok) throw new Error(`bundled skill folder '${folder}': ${checked.error}`);
    const fileContent = await readTextFile(join(skillDir, checked.path), `${folder}/${checked.path}`);
    files.push({ path: checked.path, content: fileContent });
  }
  // Code-unit order, not localeCompare: the hash must not depend on the machine's locale.
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const hash = contentHash([content, ...files.flatMap((f) => [f.path, f.content])]);
  return { name, description, content, files, hash };
}

/** Every immediate sub-folder of `dir` that holds a SKILL.md, sorted by name. */
export async function loadBundledSkills(dir: string): Promise<BundledSkill[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const skills: BundledSkill[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const skillDir = join(dir, entry.name);
    if (!(await isFile(join(skillDir, "SKILL.md")))) continue;
    skills.push(await loadOne(skillDir, entry.name));
  }
  skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return skills;
}

/**
 * Imports the bundled skills into the library (idempotent by content hash). Every session's prompt
 * shows their descriptions, checked by scanStored (remembered by text): checked here, the first
 * sessions after a start do not compile the scanner's expressions (about 165 ms, and again whenever
 * V8 has dropped their code after a few idle collections).
 */
export async function importBundledSkills(skills: Pick<SkillStore, "importBundled">, dir: string, log: Logger): Promise<void> {
  const bundled = await loadBundledSkills(dir);
  for (const skill of bundled) scanStored(skill.description);
  const counts = await skills.importBundled(bundled);
  log.info(counts, "bundled skills imported");
}
