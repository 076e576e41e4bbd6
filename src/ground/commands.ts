/**
 * The commands every platform offers (`/cairn help|me|team|...`, console `/help` ...): their
 * names, what a reply to one is, and how a line of text becomes a name and arguments. Adapters
 * map their syntax to these; the dispatcher (commands/dispatch.ts) answers them.
 */

export const COMMANDS = ["help", "me", "team", "skills", "learn", "lessons", "new", "forget", "confirm", "approve", "reject", "pin", "unpin", "archive", "restore", "persona", "listen", "report", "history", "rollback", "jobs", "why", "keep", "reword", "teachers", "verify", "correct", "good"] as const;
export type CommandName = (typeof COMMANDS)[number];

export interface CommandReply {
  text: string;
  /** Shown only to the person who asked, where the platform can (Slack ephemeral, Discord ephemeral). */
  ephemeral: boolean;
  /**
   * For commands that change something (the views' buttons run them): it was done, the asker may
   * not do it, or there was nothing to do it to. Absent for commands that only answer.
   */
  outcome?: "done" | "refused" | "not_found";
}

/** A command to run: its name and arguments, as parsed from what the person typed or clicked. */
export interface CommandCall {
  name: CommandName;
  args: readonly string[];
}

export function parseCommand(word: string): CommandName | null {
  const w = word.trim().toLowerCase();
  return (COMMANDS as readonly string[]).includes(w) ? (w as CommandName) : null;
}

/** Commands whose argument is free text, kept whole (line breaks and all) as one argument. */
const FREE_TEXT: ReadonlySet<CommandName> = new Set(["learn", "persona", "correct"]);

/** A command's arguments from the text after its name: words, or the whole text for `learn`, `persona`, `correct`. */
export function commandArgs(name: CommandName, rest: string): string[] {
  if (FREE_TEXT.has(name)) return rest.trim() ? [rest.trim()] : [];
  return rest.split(/\s+/).filter(Boolean);
}

/** "forget me confirm" -> { name: "forget", args: ["me", "confirm"] }; null for an unknown command. */
export function parseCommandLine(text: string): { name: CommandName; args: string[] } | null {
  const [, first = "", rest = ""] = /^(\S*)\s*([\s\S]*)$/.exec(text.trim()) ?? [];
  const name = parseCommand(first || "help");
  return name ? { name, args: commandArgs(name, rest) } : null;
}

/** "learn", "learn from this thread" (cairn's own mention already stripped). */
const LEARN_MESSAGE = /^learn(?:\s+from\s+(?:this|the)\s+(?:thread|conversation))?[.!]?$/i;
/** "why", "why?", "why this answer?", "why did you say that?". */
const WHY_MESSAGE = /^why(?:\s+(?:this|that)\s+answer|\s+did\s+you\s+say\s+(?:this|that))?\s*[.!?]*$/i;

/**
 * The command a mention of cairn is (its text without the mention), or null for a chat message:
 * `@cairn learn` and `@cairn why` in a thread are commands on every platform, not turns.
 */
export function mentionCommand(text: string): "learn" | "why" | null {
  const t = text.trim();
  return LEARN_MESSAGE.test(t) ? "learn" : WHY_MESSAGE.test(t) ? "why" : null;
}
