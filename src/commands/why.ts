/**
 * `/cairn why` (console `/why`, `@cairn why` in a Slack thread): what cairn's latest answer in this
 * conversation drew on; `why <message id>` (a Slack message shortcut, a Discord context menu): what
 * that answer drew on, the message found through the deliveries of this channel. Both read the
 * reply's trace (learning/trace-store.ts): the team rules and facts in its prompt, the lessons shown
 * with the question, the skills it read, the searches it ran and the messages they returned.
 *
 * Only what the asker may see, whoever asked the question: another person's profile facts, private
 * lessons and skills, DMs, and listened channels the asker cannot read are counted, never shown
 * (the rules every read of theirs follows, applied again for the asker). Listed in why-lines.ts.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { ConversationScope, PersonScope } from "../ground/types.ts";
import { scopeOf, scopeOfDelivery, workspaceScopeOf, type HistoryStore, type Place } from "../history/store/store.ts";
import type { MemoryEntry, MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { Learning } from "../learning/learning.ts";
import type { ReplyTrace } from "../learning/trace-store.ts";
import { whyText, type Explained } from "./why-lines.ts";

export interface WhyDeps {
  learning: Pick<Learning, "lessons" | "lastAnswer" | "traceOf">;
  history: Pick<HistoryStore, "findDelivery" | "findMessage" | "cited">;
  memory: Pick<MemoryStore, "visible" | "activeIds">;
  skills: Pick<SkillStore, "list">;
  /** The listened channels whose messages the asker can read now: a search's finds there are shown to them only. */
  knowledge: { readers: { readable(scope: PersonScope): Promise<string[]> } };
}

export const NOT_AN_ANSWER = "That message is not one of my answers here, so I cannot say what it drew on. Pick one of my answers.";
export const NOT_A_TURN = "That is a post of mine (a command's answer, a report or a notice), not an answer to someone's message: no prompt was behind it.";

/** An answer to explain: its stored id, the stored message it answered, what it drew on. */
interface Answer {
  replyId: number;
  questionId: number;
  /** Its conversation: the asker's (the latest answer), or one of their channel's (found by its delivery). */
  in: ConversationScope;
  trace: ReplyTrace | null;
}

/** `messageId`: the platform's id of one of cairn's messages in the asker's channel (absent: the latest answer here). */
export async function whyCommand(deps: WhyDeps, place: Place, messageId?: string): Promise<CommandReply> {
  const last = messageId ? null : await deps.learning.lastAnswer(scopeOf(place));
  const found = messageId ? await answerAt(deps, place, messageId) : last && { ...last, in: scopeOf(place) };
  if (!found) return { text: "I have not answered anything in this conversation yet.", ephemeral: true };
  if (typeof found === "string") return { text: found, ephemeral: true, outcome: "not_found" };
  const explained = await explain(deps, place, found);
  return { text: whyText({ ...explained, replyId: found.replyId, latest: !messageId }), ephemeral: true };
}

/** The reply posted as `platformId` in the asker's channel; a sentence when there is none to explain. */
async function answerAt(deps: WhyDeps, place: Place, platformId: string): Promise<Answer | string> {
  const delivery = await deps.history.findDelivery(workspaceScopeOf(place), place.conversation.channelId, platformId);
  // A DM's answers are its owner's alone: in a DM only that DM's own are explained.
  if (!delivery || (place.conversation.isDm && delivery.conversationId !== place.conversation.id)) return NOT_AN_ANSWER;
  const reply = await deps.history.findMessage(scopeOfDelivery(delivery), delivery.messageId);
  if (!reply || reply.role !== "assistant") return NOT_AN_ANSWER;
  if (reply.replyToId === null) return NOT_A_TURN;
  return { replyId: reply.id, questionId: reply.replyToId, in: scopeOfDelivery(delivery), trace: await deps.learning.traceOf(workspaceScopeOf(place), reply.id) };
}

/** What of the trace the asker may see, and how much is left out (private to someone else, or gone since). */
async function explain(deps: WhyDeps, place: Place, answer: Answer): Promise<Omit<Explained, "replyId" | "latest">> {
  const t = answer.trace ?? { toolCalls: 0, skills: [], lessons: [], rules: [], facts: [], searches: [] };
  const scope = scopeOf(place);
  const memoryIds = [...t.rules, ...t.lessons, ...t.facts];
  const [question, listing, inMemory, active, skills, readable] = await Promise.all([
    t.searches.length ? deps.history.findMessage(answer.in, answer.questionId) : null,
    deps.learning.lessons.listing(scope),
    t.facts.length ? deps.memory.visible(scope) : Promise.resolve([]),
    deps.memory.activeIds(workspaceScopeOf(place), memoryIds),
    t.skills.length ? deps.skills.list(scope) : Promise.resolve([]),
    t.searches.length ? deps.knowledge.readers.readable(scope) : Promise.resolve([]),
  ]);
  const visible = new Map<string, MemoryEntry>([...listing.own, ...listing.channel, ...listing.rules, ...inMemory].map((e) => [e.id, e]));
  const pick = (ids: readonly string[]) => ids.flatMap((id) => visible.get(id) ?? []);
  const rules = pick(t.rules);
  const lessons = pick(t.lessons);
  const facts = pick(t.facts);
  const unseen = memoryIds.filter((id) => !visible.has(id));
  const gone = unseen.filter((id) => !active.has(id)).length;
  const mine = new Set(skills.map((s) => s.name));
  const skillsRead = t.skills.filter((name) => mine.has(name));
  const cited = new Map((await deps.history.cited(scope, t.searches.flatMap((s) => s.messageIds), readable)).map((m) => [m.id, m]));
  // The words searched for came from the asker's question and what only they may see (their profile,
  // their DMs' finds): shown to them, not to a channel member asking about someone else's answer.
  const ownQuestion = question?.authorId === place.person.id;
  const searches = t.searches.map((s) => ({
    query: ownQuestion ? s.query : null,
    found: s.messageIds.flatMap((id) => cited.get(id) ?? []),
    hidden: s.messageIds.filter((id) => !cited.has(id)).length,
  }));
  const hidden = unseen.length - gone + (t.skills.length - skillsRead.length) + searches.reduce((n, s) => n + s.hidden, 0);
  return { rules, lessons, facts, skills: skillsRead, searches, toolCalls: t.toolCalls, hidden, gone, authors: listing.authors, personId: place.person.id };
}
