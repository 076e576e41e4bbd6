/**
 * `/cairn why` (console `/why`): what cairn's latest answer in this conversation drew on, as its
 * trace recorded it (learning/trace-store.ts): the team rules in its prompt, the lessons shown with
 * the question, the skills it read and how many tools it called, each with its id and the command
 * that corrects it. Only what the asker may see: a lesson shown to someone else's question that is
 * private to them is counted, never shown; another person's profile never appears here.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { ConversationScope } from "../ground/types.ts";
import { scopeOf, type Place } from "../history/store/store.ts";
import type { LessonStore, MemoryEntry } from "../lessons/lesson-store.ts";
import { lessonLine } from "./lessons.ts";

export interface WhyDeps {
  learning: {
    lessons: LessonStore;
    lastAnswer(scope: ConversationScope): Promise<{ replyId: number; trace: { toolCalls: number; skills: string[]; lessons: string[]; rules: string[] } | null } | null>;
  };
}

export async function whyCommand(deps: WhyDeps, place: Place): Promise<CommandReply> {
  const scope = scopeOf(place);
  const last = await deps.learning.lastAnswer(scope);
  if (!last) return { text: "I have not answered anything in this conversation yet.", ephemeral: true };
  const trace = last.trace ?? { toolCalls: 0, skills: [], lessons: [], rules: [] };
  const { own, channel, rules, authors } = await deps.learning.lessons.listing(scope);
  const visible = new Map<string, MemoryEntry>([...own, ...channel, ...rules].map((e) => [e.id, e]));
  const line = (e: MemoryEntry) => lessonLine(e, authors.get(e.createdById ?? ""));
  const shownRules = trace.rules.flatMap((id) => visible.get(id) ?? []);
  const shownLessons = trace.lessons.flatMap((id) => visible.get(id) ?? []);
  const hidden = trace.lessons.length + trace.rules.length - shownRules.length - shownLessons.length;
  const out = [`**Why my last answer here** (reply ${last.replyId})`];
  if (shownRules.length) out.push("Team rules in its prompt (`forget <id>` archives one: admins; or react 👎 on the answer):", ...shownRules.map(line));
  if (shownLessons.length) out.push("Lessons shown with the question (`forget <id>` removes or archives one you taught):", ...shownLessons.map(line));
  if (trace.skills.length) out.push(`Skills it read: ${trace.skills.map((s) => `\`${s}\``).join(", ")} (\`history <skill>\` shows their changes)`);
  out.push(trace.toolCalls ? `Tools called: ${trace.toolCalls}.` : "It called no tools.");
  if (hidden > 0) out.push(`${hidden} more ${hidden === 1 ? "item was" : "items were"} private to someone else, and ${hidden === 1 ? "is" : "are"} not shown.`);
  if (!shownRules.length && !shownLessons.length && !trace.skills.length && hidden === 0) out.push("No team rule, lesson or skill was in front of it: it answered from the conversation and memory.");
  out.push("If it was wrong, say so in words (\"no, ...\") or react 👎: I'll ask what I should have done and remember it.");
  return { text: out.join("\n"), ephemeral: true };
}
