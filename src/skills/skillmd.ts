/**
 * The SKILL.md format: YAML frontmatter between `---` lines, then a markdown body. Pure functions
 * only; storage and tools call these. Error strings are read by the model that wrote the skill, so
 * each one says what is wrong and how to fix it.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { isScalar, parseDocument, stringify } from "yaml";
import { z } from "zod";

export interface ParsedSkill {
  name: string;
  description: string;
  version?: string;
  tags?: string[];
  /** Frontmatter keys cairn does not interpret, kept so that a rewrite does not drop them. */
  extra: Record<string, unknown>;
  body: string;
}

export type ParseSkillResult = { ok: true; skill: ParsedSkill } | { ok: false; error: string };
export type SupportPathResult = { ok: true; path: string } | { ok: false; error: string };

export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SUPPORT_PATH_MAX = 200;
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const SUPPORT_DIRS = ["references", "templates", "scripts", "assets"] as const;
export type SupportDir = (typeof SUPPORT_DIRS)[number];

const KNOWN_KEYS = new Set(["name", "description", "version", "tags"]);

const FRONTMATTER_EXAMPLE =
  "---\nname: my-skill\ndescription: One line saying when to use it\n---\n# Body...";

const NAME_RULE = `^[a-z0-9][a-z0-9._-]*$ (lowercase letters, digits, '.', '_' or '-')`;

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `'${value}'`;
  return `${typeof value} ${String(value)}`;
}

const nameSchema = z
  .string({
    error: (iss) =>
      iss.input === undefined
        ? "frontmatter is missing the required field 'name' (lowercase, e.g. 'deploy-rollback')"
        : `frontmatter field 'name' must be a string; got ${describeValue(iss.input)} (quote it if YAML reads it as a number)`,
  })
  .min(1, { error: "frontmatter field 'name' is empty; give the skill a short lowercase name such as 'deploy-rollback'" })
  .max(SKILL_NAME_MAX, {
    error: (iss) =>
      `frontmatter field 'name' must be at most ${SKILL_NAME_MAX} characters; got ${String(iss.input).length}`,
  })
  .regex(SKILL_NAME_PATTERN, {
    error: (iss) => `frontmatter field 'name' must match ${NAME_RULE}; got '${String(iss.input)}'`,
  });

const descriptionSchema = z
  .string({
    error: (iss) =>
      iss.input === undefined
        ? "frontmatter is missing the required field 'description' (one line saying when to use the skill)"
        : `frontmatter field 'description' must be a string; got ${describeValue(iss.input)}`,
  })
  .trim()
  .min(1, { error: "frontmatter field 'description' is empty; write one line saying when to use the skill" })
  .max(SKILL_DESCRIPTION_MAX, {
    error: (iss) =>
      `frontmatter field 'description' must be at most ${SKILL_DESCRIPTION_MAX} characters; got ${String(iss.input).length}. Keep it to when to use the skill and move detail into the body`,
  });

// A YAML key written with no value reads as null; treating that as "absent" is kinder than an error.
const versionSchema = z
  .union([z.string(), z.number()], {
    error: (iss) =>
      `frontmatter field 'version' must be a string or number such as '1.2.0'; got ${describeValue(iss.input)}`,
  })
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : String(v)));

const tagsSchema = z
  .array(
    z.string({
      error: (iss) => `every entry of frontmatter field 'tags' must be a string; got ${describeValue(iss.input)}`,
    }),
    {
      error: (iss) =>
        `frontmatter field 'tags' must be a list of strings such as [deploy, oncall]; got ${describeValue(iss.input)}`,
    },
  )
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : v));

const frontmatterSchema = z.looseObject({
  name: nameSchema,
  description: descriptionSchema,
  version: versionSchema,
  tags: tagsSchema,
});

/** Blank lines after the closing `---` and trailing whitespace carry no meaning; drop them both ways. */
function normalizeBody(body: string): string {
  return body.replace(/\r\n?/g, "\n").replace(/^(?:[ \t]*\n)+/, "").trimEnd();
}

const FENCE = /^---[ \t]*$/;

export function parseSkillMd(text: string): ParseSkillResult {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = normalized.split("\n");
  // Models often put a blank line before the opening fence; it is harmless, so skip it.
  let start = 0;
  while (start < lines.length && (lines[start] ?? "").trim() === "") start++;
  const first = lines[start] ?? "";
  if (!FENCE.test(first)) {
    const hint = first.startsWith("```")
      ? " Do not wrap the file in a code fence; write the SKILL.md text itself."
      : "";
    return {
      ok: false,
      error: `SKILL.md must start with a YAML frontmatter block between '---' lines, like:\n${FRONTMATTER_EXAMPLE}${hint}`,
    };
  }
  let end = -1;
  for (let i = start + 1; i < lines.length; i++) {
    if (FENCE.test(lines[i] ?? "")) {
      end = i;
      break;
    }
  }
  if (end === -1) {
    return {
      ok: false,
      error: `SKILL.md frontmatter is never closed: add a line containing only '---' after the last field, like:\n${FRONTMATTER_EXAMPLE}`,
    };
  }
  const source = lines.slice(start + 1, end).join("\n");
  const body = normalizeBody(lines.slice(end + 1).join("\n"));

  const doc = parseDocument(source, { prettyErrors: true });
  const yamlError = doc.errors[0];
  if (yamlError) {
    // yaml counts lines from the start of the frontmatter; the model sees the whole file.
    const offset = start + 1;
    const message = yamlError.message.replace(
      /at line (\d+), column (\d+)/,
      (_m, line: string, col: string) => `at line ${Number(line) + offset}, column ${col}`,
    );
    const hint =
      yamlError.code === "DUPLICATE_KEY"
        ? "Each field may appear only once."
        : "If a value contains ': ' or starts with a character such as '[', '{', '*', '&', '#' or a quote, wrap the whole value in quotes.";
    return { ok: false, error: `SKILL.md frontmatter is not valid YAML: ${message}\n${hint}` };
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // toJS throws on alias bombs (maxAliasCount) and similar; the message is still useful.
    return { ok: false, error: `SKILL.md frontmatter could not be read: ${(err as Error).message}` };
  }
  if (data === null || data === undefined) {
    return {
      ok: false,
      error: `SKILL.md frontmatter is empty; it needs at least 'name' and 'description', like:\n${FRONTMATTER_EXAMPLE}`,
    };
  }
  if (typeof data !== "object" || Array.isArray(data) || data instanceof Map) {
    return {
      ok: false,
      error: `SKILL.md frontmatter must be a YAML mapping of 'key: value' lines; got ${describeValue(data)}. Write it like:\n${FRONTMATTER_EXAMPLE}`,
    };
  }

  const parsed = frontmatterSchema.safeParse(data);
  if (!parsed.success) {
    const messages = [...new Set(parsed.error.issues.map((i) => i.message))];
    const error =
      messages.length === 1
        ? (messages[0] ?? "SKILL.md frontmatter is invalid")
        : `SKILL.md frontmatter has ${messages.length} problems:\n${messages.map((m) => `- ${m}`).join("\n")}`;
    return { ok: false, error };
  }

  if (body === "") {
    return {
      ok: false,
      error:
        "SKILL.md body is empty: after the closing '---' line, write the procedure in markdown (when to use it, the steps, how to check the result).",
    };
  }

  const fm = parsed.data;
  let version = fm.version;
  // YAML reads `version: 1.10` as the number 1.1; keep what the author wrote instead.
  const versionNode = doc.get("version", true);
  if (version !== undefined && isScalar(versionNode) && typeof versionNode.value === "number" && versionNode.range) {
    version = source.slice(versionNode.range[0], versionNode.range[1]).trim();
  }

  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fm)) {
    if (!KNOWN_KEYS.has(key)) extra[key] = value;
  }
  const skill: ParsedSkill = { name: fm.name, description: fm.description, extra, body };
  if (version !== undefined) skill.version = version;
  if (fm.tags !== undefined) skill.tags = fm.tags;
  return { ok: true, skill };
}

export function serializeSkillMd(skill: ParsedSkill): string {
  const fm: Record<string, unknown> = { name: skill.name, description: skill.description };
  if (skill.version !== undefined) fm.version = skill.version;
  if (skill.tags !== undefined) fm.tags = skill.tags;
  for (const [key, value] of Object.entries(skill.extra)) {
    // A stray known key in `extra` would silently override the real field on the next parse.
    if (!KNOWN_KEYS.has(key) && value !== undefined) fm[key] = value;
  }
  // lineWidth 0: never fold long descriptions across lines; the file is read by people too.
  const yamlText = stringify(fm, { lineWidth: 0 });
  return `---\n${yamlText}---\n\n${normalizeBody(skill.body)}\n`;
}

const INCIDENT_REASON =
  "a skill is a reusable procedure for a class of task, not a record of one incident; name it for the task, e.g. 'deploy-rollback' rather than 'fix-deploy-2024-05-01'";

/** Why a name reads like one incident rather than a class of task, or null. */
function incidentMarker(name: string): string | null {
  const prefix = /^(fix|hotfix|debug|incident)[-_.]/.exec(name);
  if (prefix) return `it starts with '${prefix[0]}'`;
  if (/\d{4}-\d{2}-\d{2}/.test(name) || /\d{8}/.test(name)) return "it contains a date";
  const ticket = /(?:^|[-_.])((?:pr|issue|bug|ticket)[-_.]?\d+)(?=$|[-_.])/.exec(name);
  if (ticket) return `it contains a PR or issue number ('${ticket[1] ?? ""}')`;
  for (const segment of name.split(/[-_.]/)) {
    if (/^(19|20)\d{2}$/.test(segment)) return `it contains a year ('${segment}')`;
    if (/^\d{3,}$/.test(segment)) return `it contains a number that looks like a ticket or date ('${segment}')`;
  }
  return null;
}

/** Null when `name` is acceptable for a new skill, otherwise the reason it is not. */
export function validateSkillName(name: string): string | null {
  if (name === "") return "skill name is empty; use a short lowercase name for the task, e.g. 'deploy-rollback'";
  if (name.length > SKILL_NAME_MAX) {
    return `skill name must be at most ${SKILL_NAME_MAX} characters; got ${name.length}`;
  }
  if (!SKILL_NAME_PATTERN.test(name)) return `skill name must match ${NAME_RULE}; got '${name}'`;
  const marker = incidentMarker(name);
  if (marker) return `skill name '${name}' looks like one incident (${marker}): ${INCIDENT_REASON}`;
  return null;
}

const SUPPORT_DIRS_TEXT = SUPPORT_DIRS.map((d) => `${d}/`).join(", ");

function pathError(path: string, problem: string): SupportPathResult {
  const shown = path.length > 80 ? `${path.slice(0, 80)}...` : path;
  return {
    ok: false,
    error: `support file path '${shown}' ${problem}. Support files must be relative paths inside one of ${SUPPORT_DIRS_TEXT} with a file name, e.g. 'references/api.md'`,
  };
}

/** Checks a skill support-file path and returns it normalised (posix, no duplicate slashes). */
export function validateSupportPath(path: string): SupportPathResult {
  if (path === "") return pathError(path, "is empty");
  if (path.length > SUPPORT_PATH_MAX) {
    return pathError(path, `is ${path.length} characters long; the limit is ${SUPPORT_PATH_MAX}`);
  }
  if (path.includes("\0")) return pathError(path.replaceAll("\0", "\\0"), "contains a NUL byte");
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(path)) return pathError(path, "contains a control character");
  if (path.includes("\\")) return pathError(path, "contains a backslash; use '/' between folders");
  if (path.startsWith("/")) return pathError(path, "is absolute");
  if (path.endsWith("/")) return pathError(path, "ends with '/'; name a file, not a folder");
  const check = (segments: string[]): string | null => {
    if (segments.includes("..")) return "contains a '..' segment";
    if (segments.includes(".")) return "contains a '.' segment";
    return null;
  };
  const rawProblem = check(path.split("/"));
  if (rawProblem) return pathError(path, rawProblem);
  const normalized = posix.normalize(path);
  const normProblem = check(normalized.split("/"));
  if (normProblem || posix.isAbsolute(normalized)) return pathError(path, normProblem ?? "is absolute");
  const segments = normalized.split("/");
  const [dir, ...rest] = segments;
  if (!(SUPPORT_DIRS as readonly string[]).includes(dir ?? "")) {
    return pathError(path, `is not inside an allowed folder`);
  }
  if (rest.length === 0 || rest.some((s) => s === "")) {
    return pathError(path, `names the folder '${dir ?? ""}/' but no file inside it`);
  }
  return { ok: true, path: normalized };
}

/** Hash that identifies a skill's exact content, so re-importing unchanged bundled skills is a no-op. */
export function contentHash(parts: string[]): string {
  return createHash("sha256").update(parts.join("\0"), "utf8").digest("hex");
}
