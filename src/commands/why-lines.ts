/**
 * The words of a why answer (why.ts): each thing the answer drew on, with its id and the command
 * that corrects it, in Markdown every platform renders; what the asker may not see is only counted.
 */
import type { CitedMessage } from "../history/store/store.ts";
import type { MemoryEntry } from "../memory/store.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { lessonLine } from "./lessons.ts";
import { shortIds } from "../ground/short-id.ts";

export interface Explained {
  replyId: number;
  /** The conversation's latest answer (`why` alone), rather than one picked by its message. */
  latest: boolean;
  rules: MemoryEntry[];
  lessons: MemoryEntry[];
  facts: MemoryEntry[];
  skills: string[];
  /** `query` null: the answer was to someone else, whose words the search's may carry. */
  searches: { query: string | null; found: CitedMessage[]; hidden: number }[];
  toolCalls: number;
  /** Items left out: private to someone else (or in a channel the asker cannot read). */
  hidden: number;
  /** Memory items the answer drew on that are no longer in force (forgotten, archived). */
  gone: number;
  authors: ReadonlyMap<string, { displayName: string | null; externalId: string }>;
  /** The asker: their own facts are theirs to forget. */
  personId: string;
}

/** A search result's quote, in characters. */
const HIT_CHARS = 100;

export function whyText(x: Explained): string {
  const short = shortIds([...x.rules, ...x.lessons, ...x.facts].map((e) => e.id));
  const line = (e: MemoryEntry) => lessonLine(e, x.authors.get(e.createdById ?? ""), short);
  const out = [`**${x.latest ? "Why my last answer here" : "Why this answer"}** (reply ${x.replyId})`];
  if (x.rules.length) {
    out.push("Team rules in its prompt (react 👎 on the answer if one led it wrong; admins: `forget <id>` archives one, `reword <id> <text>` rewords it):", ...x.rules.map(line));
  }
  if (x.lessons.length) out.push("Lessons shown with the question (`forget <id>` removes one you taught):", ...x.lessons.map(line));
  if (x.facts.length) {
    out.push(
      "Facts from memory in its prompt (yours: `forget <id>` deletes one; the team's or the channel's: tell me what changed, or find the change with `history <id>` and undo it with `rollback <revision>`):",
      ...x.facts.map((e) => factLine(e, x.personId, short)),
    );
  }
  if (x.skills.length) out.push(`Skills it read: ${x.skills.map((s) => `\`${s}\``).join(", ")} (\`history <skill>\` shows their changes; admins: \`archive <skill>\`)`);
  if (x.searches.length) out.push("Searches it ran (a message it found is out of date? tell me what is true now):", ...x.searches.flatMap(searchLines));
  out.push(x.toolCalls ? `Tools called: ${x.toolCalls}.` : "It called no tools.");
  if (x.hidden > 0) {
    out.push(`${x.hidden} more ${x.hidden === 1 ? "item was" : "items were"} private to someone else (a profile, private lessons or skills, DMs, a channel you cannot read), and ${x.hidden === 1 ? "is" : "are"} not shown.`);
  }
  if (x.gone > 0) out.push(`${x.gone} ${x.gone === 1 ? "item it drew on is" : "items it drew on are"} no longer in memory (forgotten or archived since).`);
  const shown = x.rules.length + x.lessons.length + x.facts.length + x.skills.length + x.searches.length;
  if (shown === 0 && x.hidden === 0 && x.gone === 0) out.push("No team rule, lesson, fact, skill or search was in front of it: it answered from the conversation.");
  out.push("If it was wrong, say so in words (\"no, ...\") or react 👎: I'll ask what I should have done and remember it.");
  return out.join("\n");
}

function factLine(e: MemoryEntry, personId: string, short: (id: string) => string): string {
  const where = e.scope === "team" ? "team memory" : e.scope === "channel" ? "this channel's memory" : e.ownerId === personId ? "your profile" : "a profile";
  return `- \`${short(e.id)}\` ${e.text} *(${where})*`;
}

function searchLines(s: Explained["searches"][number]): string[] {
  const what = s.query === null ? "A search (its words are shown to whoever asked the question)" : `Search for "${excerpt(s.query, HIT_CHARS)}"`;
  const found = s.found.length + s.hidden === 0 ? "found nothing" : `found ${s.found.length + s.hidden}${s.hidden ? ` (${s.hidden} not yours to see)` : ""}`;
  return [`- ${what}: ${found}`, ...s.found.map(hitLine)];
}

function hitLine(m: CitedMessage): string {
  const label = `${m.author ?? "cairn"}, ${m.createdAt.toISOString().slice(0, 10)}`;
  return `  - ${m.link ? `[${label}](${m.link})` : label}: "${excerpt(m.text.replace(/\s+/g, " "), HIT_CHARS)}" *(message ${m.id})*`;
}
