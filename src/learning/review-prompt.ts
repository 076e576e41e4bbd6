/**
 * What a review asks the model, as the last user message after the conversation. The intent is
 * Hermes' memory nudge and skill review: keep what will matter in later conversations, and nothing
 * else. Saving nothing is the usual, expected outcome: a review that always finds something fills
 * memory with noise.
 */
import type { Turn } from "../agent/prompt.ts";

export interface ReviewPromptInput {
  /** The person whose message the reviewed reply answered. */
  name: string;
  isDm: boolean;
  /** Writes one review may make. */
  maxWrites: number;
  /** Skills the reviewed turn read (skill_view), for the skill review. */
  skillsRead?: readonly string[];
}

export const NOTHING_TO_SAVE = "Nothing to save.";

const header = (what: string, name: string) => `══ ${what} (from cairn itself, not from ${name}: nobody is waiting for an answer, and nothing you write here is shown) ══`;

const closing = (i: ReviewPromptInput) =>
  [
    `You may make at most ${i.maxWrites} writes. Changes to team memory, and to entries a person wrote, are held until ${i.name} confirms them; ${i.name} is told what you saved.`,
    `Saving nothing is the usual outcome. If nothing stands out, reply only "${NOTHING_TO_SAVE}" and stop. Make all your changes in one reply (several tool calls together if need be): once they all go through, the review ends.`,
  ].join("\n");

export function memoryReviewPrompt(i: ReviewPromptInput, end = true): string {
  return [
    header("MEMORY REVIEW", i.name),
    `Look back over this conversation and decide whether anything in it should be remembered in future conversations with ${i.name}. Worth keeping:`,
    `- who ${i.name} is: their role and team, what they work on, the systems they own;`,
    `- their preferences and expectations: how they want to be answered (length, format, tone, language), what they asked you to always or never do, what frustrated them;`,
    `- a convention or decision ${i.isDm ? "the team" : "this channel or the team"} settled here that nobody saved yet.`,
    `Rules:`,
    `- Read the memory in your system prompt first. Do not save what is there already; if an entry is now wrong, replace it rather than adding a second one.`,
    `- Never save one-off task details or the state of a task, failures of tools or of the environment (timeouts, outages, missing access), what the conversation history already holds, or secrets.`,
    `- Target user is ${i.name}'s private profile${i.isDm ? "" : ", channel this channel"}, team everyone in the workspace. One short declarative fact per entry.`,
    ...(end ? [closing(i)] : []),
  ].join("\n");
}

export function skillReviewPrompt(i: ReviewPromptInput, end = true): string {
  const read = i.skillsRead?.length ? ` (this conversation read: ${i.skillsRead.join(", ")})` : "";
  return [
    header("SKILL REVIEW", i.name),
    `This conversation took many tool calls. Decide whether it taught a procedure worth keeping in the skill library. Signals, strongest first:`,
    `- ${i.name} corrected how you worked: style, format, the order of steps, the tool to use, a check you skipped. A correction is a first-class signal: record it in the skill it belongs to.`,
    `- A non-trivial approach that took trial and error, or a change of course that worked, for a kind of task that will come again.`,
    `Where it goes, in this order of preference:`,
    `1. patch a skill used in this conversation${read};`,
    `2. patch a broader skill that covers this kind of task (skills_list, skill_view);`,
    `3. add a support file to such a skill (write_file under references/);`,
    `4. only then create a new skill, named and written for the class of task, not this instance, with scope '${i.isDm ? "user" : "channel"}'.`,
    `Never record failures of the environment (timeouts, outages, missing access), one-off task state, or what the conversation history already holds.`,
    i.isDm
      ? `Team skills belong to everyone: a review in a direct message cannot change them. A change you try on one is passed to ${i.name} as a suggestion; do not retry it.`
      : `Team skills belong to everyone: a patch, edit or support file you write for one is not applied but proposed here, with its diff, for a teammate to approve (the tool result says so); do not retry it. A review cannot create or archive team skills.`,
    ...(end ? [closing(i)] : []),
  ].join("\n");
}

/** Both reviews in one run, when both were due: one request, one set of writes under one cap. */
export function combinedReviewPrompt(i: ReviewPromptInput): string {
  return [memoryReviewPrompt(i, false), skillReviewPrompt(i, false), closing(i)].join("\n\n");
}

/** The conversation's turns with the review prompt as the final user message (merged if the history ends with one). */
export function withReviewPrompt(turns: readonly Turn[], prompt: string): Turn[] {
  const last = turns.at(-1);
  if (last?.role === "user") return [...turns.slice(0, -1), { role: "user", content: [...last.content, { type: "text", text: prompt }] }];
  return [...turns, { role: "user", content: [{ type: "text", text: prompt }] }];
}
