/**
 * The commands every platform offers (`/cairn help|me|skills|new`, console `/help` ...). Adapters map
 * their syntax to these names; the answers are composed here so every platform says the same.
 */
import type { Core } from "./core.ts";
import type { Inbound } from "../core/types.ts";
import { scopeOf } from "../history/store.ts";
import { budgetHeader } from "../memory/store.ts";

export const COMMANDS = ["help", "me", "skills", "new"] as const;
export type CommandName = (typeof COMMANDS)[number];

export interface CommandReply {
  text: string;
  /** Shown only to the person who asked, where the platform can (Slack ephemeral, Discord ephemeral). */
  ephemeral: boolean;
}

export function parseCommand(word: string): CommandName | null {
  const w = word.trim().toLowerCase();
  return (COMMANDS as readonly string[]).includes(w) ? (w as CommandName) : null;
}

const HELP = `*cairn* remembers what your team teaches it.
- Talk to it in a DM, or mention it in a channel; it follows the thread after that.
- Tell it your preferences ("I prefer bullet points"), team conventions and decisions: it saves them.
- It keeps a shared library of skills (procedures) the whole team can use and improve.
Commands: \`help\` this text · \`me\` what cairn knows about you · \`skills\` the skill library · \`new\` start a fresh session (earlier ones stay searchable).`;

export async function runCommand(core: Core, inbound: Inbound, name: CommandName): Promise<CommandReply> {
  switch (name) {
    case "help":
      return { text: HELP, ephemeral: true };
    case "new": {
      const place = await core.history.resolve(inbound);
      await core.sessions.end(place.conversation.id, "request");
      return { text: "Started a new session: I'll take a fresh look at memory and skills from your next message. Earlier conversations stay searchable.", ephemeral: false };
    }
    case "me": {
      const place = await core.history.resolve(inbound);
      const scope = scopeOf(place);
      const entries = await core.memory.entries(scope, "user");
      const used = entries.reduce((n, e) => n + e.text.length, 0);
      const messages = await core.history.countByAuthor(place.person.id);
      const lines = entries.length
        ? entries.map((e) => `- ${e.text}  _(id ${e.id}, ${e.source}, ${e.createdAt.toISOString().slice(0, 10)})_`)
        : ["- (nothing yet)"];
      return {
        text: [`*What cairn knows about you* ${budgetHeader(used, core.memory.limit("user"))}`, ...lines, `Stored messages from you: ${messages}.`].join("\n"),
        ephemeral: true,
      };
    }
    case "skills": {
      const place = await core.history.resolve(inbound);
      const skills = await core.skills.list(scopeOf(place));
      const lines = skills.length ? skills.map((s) => `- \`${s.name}\`${s.bundled ? " (bundled)" : ""}: ${s.description}`) : ["- (none yet)"];
      return { text: [`*Skills* (${skills.length})`, ...lines].join("\n"), ephemeral: true };
    }
  }
}
