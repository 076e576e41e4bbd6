/**
 * A message that is a command typed without its slash ("forget me confirm", "approve c1a2b3c4…").
 * Sent to the model as chat it would do nothing, and a model might even say it was done: a privacy
 * trap for `forget me confirm`. So such a line never becomes a turn. The rule, the same everywhere:
 * - a command that only answers (`skills`, `history <id>`, `listen status`…) is run where its answer
 *   is seen by the asker alone (a DM with cairn, by the intake; the console: a terminal nobody else reads);
 * - anything else (every command that changes something, and any command where the answer would be
 *   a public message) is answered "did you mean `/cairn …`?" and not run: a sentence like
 *   "forget me" could be chat, and a change is made only by the command itself.
 * Only full forms with valid arguments count: ids carry a digit and have 6+ characters (a short
 * id's prefix fits), skill names a hyphen or digit, so "forget about it" or "restore backups" is
 * chat. Bare words that are ordinary replies ("me", "why", "new", "confirm") are chat too.
 */
import { parseCommandLine, type CommandCall, type CommandName } from "./commands.ts";
import type { Platform } from "./types.ts";

/** An id as a person sees it (cuid, revision id, Slack ts, Discord snowflake) or its 6+ char prefix. */
const ID = String.raw`(?=[\w.:-]*\d)[a-z0-9][\w.:-]{5,}`;
const IDS = `${ID}(?:\\s+${ID})*`;
/** A skill's name (kebab-case, or carrying a digit), or its id. */
const SKILL = String.raw`(?:${ID}|[a-z0-9]+(?:[-_][a-z0-9]+)+)`;

/** The whole line each form must be (after the command word), and whether it changes anything. */
const FORMS: Partial<Record<CommandName, { args: RegExp; changes: boolean }[]>> = {
  help: [{ args: /^$/, changes: false }],
  team: [{ args: /^$/, changes: false }],
  skills: [{ args: /^$/, changes: false }],
  lessons: [{ args: /^$/, changes: false }],
  report: [{ args: /^$/, changes: false }],
  persona: [{ args: /^$/, changes: false }, { args: /^clear$/i, changes: true }],
  why: [{ args: new RegExp(`^${ID}$`, "i"), changes: false }],
  history: [{ args: new RegExp(`^${SKILL}$`, "i"), changes: false }],
  listen: [{ args: /^status$/i, changes: false }, { args: /^(?:on|off|exclude-me)$/i, changes: true }],
  teachers: [{ args: /^(?:list)?$/i, changes: false }, { args: new RegExp(`^(?:add|remove)\\s+(?:<@\\w+>|${ID})$`, "i"), changes: true }],
  jobs: [{ args: /^$/, changes: false }, { args: /^run\s+(?:curator|report)(?:\s+--dry-run)?$/i, changes: true }],
  forget: [{ args: /^me(?:\s+confirm(?:\s+anonymous)?)?$/i, changes: true }, { args: new RegExp(`^${ID}$`, "i"), changes: true }],
  confirm: [{ args: new RegExp(`^${IDS}$`, "i"), changes: true }],
  approve: [{ args: new RegExp(`^${ID}$`, "i"), changes: true }],
  reject: [{ args: new RegExp(`^${ID}$`, "i"), changes: true }],
  rollback: [{ args: new RegExp(`^${ID}$`, "i"), changes: true }],
  verify: [{ args: new RegExp(`^${IDS}$`, "i"), changes: true }],
  keep: [{ args: new RegExp(`^(?:(?:new|old|both)\\s+)?${ID}$`, "i"), changes: true }],
  reword: [{ args: new RegExp(`^${ID}\\s+\\S[\\s\\S]*$`, "i"), changes: true }],
  pin: [{ args: new RegExp(`^${SKILL}$`, "i"), changes: true }],
  unpin: [{ args: new RegExp(`^${SKILL}$`, "i"), changes: true }],
  archive: [{ args: new RegExp(`^${SKILL}$`, "i"), changes: true }],
  restore: [{ args: new RegExp(`^${SKILL}$`, "i"), changes: true }],
};

export interface TypedCommand {
  call: CommandCall;
  /** It changes something: never run from a message, only pointed to. */
  changes: boolean;
}

/**
 * The command a message is, or null for chat. A leading "/", "cairn" or "/cairn" is allowed (Slack
 * runs no slash command in a thread, so people send one as a message); so is a final "." or "!".
 */
export function typedCommand(text: string): TypedCommand | null {
  const line = text
    .trim()
    .replace(/^\/?(?:cairn\b[\s,:]*)?\/?/i, "")
    .replace(/[.!]+$/, "")
    .trim();
  const [, word = "", rest = ""] = /^(\S+)\s*([\s\S]*)$/.exec(line) ?? [];
  const call = word ? parseCommandLine(`${word} ${rest}`) : null;
  const form = call && FORMS[call.name]?.find((f) => f.args.test(rest.trim()));
  return call && form ? { call, changes: form.changes } : null;
}

/** The command as the person's platform takes it: `/cairn forget me` (console: `/forget me`). */
export function commandSyntax(platform: Platform, call: CommandCall): string {
  const words = [call.name, ...call.args].join(" ");
  return platform === "console" ? `/${words}` : `/cairn ${words}`;
}

/** The answer to a typed command that is not run here. */
export function didYouMean(platform: Platform, call: CommandCall): string {
  const command = commandSyntax(platform, call);
  return `Did you mean \`${command}\`? I did not run it: a message is read as chat, and a command runs only as a command. Send \`${command}\` to run it${platform === "slack" ? " (outside a thread: Slack runs no command in one)" : ""}.`;
}
