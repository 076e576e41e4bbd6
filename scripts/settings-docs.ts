/**
 * `npm run docs:settings`: writes the settings table of docs/operations.md (between its
 * `<!-- settings:start -->` and `<!-- settings:end -->` markers) and .env.example, both from the
 * environment schema (src/app/config.ts: names and defaults) and its notes (src/app/setting-notes.ts:
 * groups and what each does). `--check` writes nothing and exits 1 when either file differs.
 * test/unit/settings-docs.test.ts runs the same comparison, so the two cannot drift from the code.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema } from "../src/app/config.ts";
import { SETTING_GROUPS, SETTING_NOTES, type SettingGroup, type SettingName, type SettingNote } from "../src/app/setting-notes.ts";

export const REPO = join(fileURLToPath(import.meta.url), "..", "..");
export const OPERATIONS_DOC = join(REPO, "docs", "operations.md");
export const ENV_EXAMPLE = join(REPO, ".env.example");
export const START = "<!-- settings:start -->";
export const END = "<!-- settings:end -->";
export const FIX = "npm run docs:settings";

export interface SettingDoc extends SettingNote {
  name: SettingName;
  /** The schema's own default, as written in an environment file; null when it has none. */
  value: string | null;
}

/** The schema's default as an environment value: what an unset variable becomes. */
function asValue(parsed: unknown): string | null {
  if (parsed === undefined || (Array.isArray(parsed) && parsed.length === 0)) return null;
  if (Array.isArray(parsed)) return parsed.join(",");
  return String(parsed);
}

/** Every setting of the schema, grouped, with its default read from the schema. */
export function settingDocs(): SettingDoc[] {
  // An empty environment parses to every default (ANTHROPIC_API_KEY is checked later, by main.ts).
  const defaults: Record<string, unknown> = configSchema.parse({});
  const notes: Record<SettingName, SettingNote> = SETTING_NOTES;
  // The notes' order (grouped, related settings together); the schema's names, every one.
  const names = Object.keys(notes) as SettingName[];
  const missing = Object.keys(configSchema.shape).filter((name) => !(name in notes));
  if (missing.length) throw new Error(`settings without a note in src/app/setting-notes.ts: ${missing.join(", ")}`);
  const unknown = names.filter((name) => !(name in configSchema.shape));
  if (unknown.length) throw new Error(`notes for settings the schema does not have: ${unknown.join(", ")}`);
  const docs = names.map((name) => {
    const note = notes[name];
    const value = asValue(defaults[name]);
    // A default written in two places would drift: the schema's wins, the note only says what unset means.
    if (value !== null && note.absent) throw new Error(`${name} has a default in the schema (${value}); drop its "absent" note`);
    if (value === null && !note.absent) throw new Error(`${name} has no default in the schema; give its note an "absent" text`);
    return { name, value, ...note };
  });
  const order = Object.keys(SETTING_GROUPS);
  return docs.sort((a, b) => order.indexOf(a.group) - order.indexOf(b.group));
}

const groupsOf = (docs: SettingDoc[]) =>
  (Object.keys(SETTING_GROUPS) as SettingGroup[]).map((group) => ({ group, title: SETTING_GROUPS[group], docs: docs.filter((d) => d.group === group) })).filter((g) => g.docs.length);

const cell = (text: string) => text.replace(/\|/g, "\\|");
/** A setting name or a bare value in code type; "(none)" and phrases as they are. */
const absentCell = (absent: string) => (/^[A-Z_]+$|^https?:/.test(absent) ? `\`${absent}\`` : absent);

/** The Markdown put between the markers: one table per group. */
export function renderSettingsTable(docs: SettingDoc[] = settingDocs()): string {
  const out = [`<!-- Generated from src/app/config.ts and src/app/setting-notes.ts: edit there, then run \`${FIX}\`. -->`];
  for (const { title, docs: list } of groupsOf(docs)) {
    out.push("", `### ${title}`, "", "| setting | default | what it does |", "| --- | --- | --- |");
    for (const d of list) out.push(`| \`${d.name}\` | ${d.value === null ? absentCell(d.absent ?? "") : `\`${cell(d.value)}\``} | ${cell(d.text)} |`);
  }
  return out.join("\n");
}

/** `doc` with the text between its markers replaced by `table`. */
export function spliceSettings(doc: string, table: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/operations.md needs the markers ${START} and ${END}`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

/** Words wrapped into `# ` comment lines of at most `width` characters. */
function comment(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = "#";
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > width && line !== "#") {
      lines.push(line);
      line = "#";
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

/** A value as .env writes it: quoted when it holds a space (systemd and a shell read it so too). */
const envValue = (value: string) => (/\s/.test(value) ? `"${value}"` : value);

/** The whole .env.example. */
export function renderEnvExample(docs: SettingDoc[] = settingDocs()): string {
  const out = [
    "# cairn settings. Copy to .env and fill in; every variable here is optional except ANTHROPIC_API_KEY.",
    "# A wrong value stops start-up with the variable's name and what was expected; `npm run doctor` checks them all.",
    "# With no Slack or Discord token set, cairn starts the console chat in your terminal.",
    `# Generated from src/app/config.ts and src/app/setting-notes.ts by \`${FIX}\`: edit there, not here.`,
  ];
  for (const { title, docs: list } of groupsOf(docs)) {
    out.push("", `# --- ${title} `.padEnd(100, "-"));
    for (const d of list) {
      const unset = d.absent && !d.absent.startsWith("(") ? ` Unset: ${d.absent}.` : "";
      out.push(...comment(`${d.text}${unset}`));
      const line = `${d.name}=${envValue(d.example ?? d.value ?? "")}`;
      out.push(d.required ? line : `# ${line}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** The two files as they should be, and whether each is so now. */
export function settingsFiles(): { path: string; want: string; have: string }[] {
  const docs = settingDocs();
  const operations = readFileSync(OPERATIONS_DOC, "utf8");
  return [
    { path: OPERATIONS_DOC, want: spliceSettings(operations, renderSettingsTable(docs)), have: operations },
    { path: ENV_EXAMPLE, want: renderEnvExample(docs), have: readFileSync(ENV_EXAMPLE, "utf8") },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const file of settingsFiles()) {
    if (file.want === file.have) continue;
    stale++;
    if (check) process.stderr.write(`${file.path} is out of date: run \`${FIX}\`\n`);
    else writeFileSync(file.path, file.want);
  }
  if (!check) process.stdout.write(stale ? `wrote ${stale} file(s)\n` : "settings docs are up to date\n");
  process.exit(check && stale ? 1 : 0);
}
