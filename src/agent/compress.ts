/**
 * Context compression: when a session's history passes its threshold, the older turns are folded
 * into a running summary by the review model, keeping decisions and facts; the newest messages
 * stay verbatim. If the review model cannot be reached, older turns are dropped with a note rather
 * than failing the person's turn.
 */
import type { ModelClient } from "./model.ts";
import type { HistoryMessage } from "../history/store/store.ts";

const INSTRUCTIONS = `You compress chat history for an assistant named cairn. Write a summary it will read later instead of these messages.
Keep: every decision, fact, preference, number, name, date, open question, commitment and who said what.
Drop: greetings, filler, restated content. Use short bullet points, at most 350 words. Do not invent anything.`;

export function transcript(messages: readonly HistoryMessage[]): string {
  return messages
    .map((m) => {
      const who = m.role === "assistant" ? "cairn" : (m.author?.displayName ?? m.author?.externalId ?? "someone");
      return `${m.createdAt.toISOString().slice(0, 16)} ${who}: ${m.text}`;
    })
    .join("\n");
}

export async function summarize(
  model: ModelClient,
  summaryModel: string,
  previous: string | null,
  older: readonly HistoryMessage[],
  /** The session's workspace, whose tokens the call counts in. */
  workspaceId: string,
): Promise<string> {
  const prior = previous ? `Summary so far:\n${previous}\n\n` : "";
  const reply = await model.create({
    model: summaryModel,
    max_tokens: 1024,
    system: INSTRUCTIONS,
    messages: [{ role: "user", content: `${prior}Messages to fold in:\n${transcript(older)}\n\nWrite the updated summary.` }],
  }, { workspaceId });
  const text = reply.content
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("")
    .trim();
  if (!text) throw new Error("the review model returned an empty summary");
  return text;
}

export function droppedNote(previous: string | null, dropped: number): string {
  return `${previous ? `${previous}\n` : ""}- (${dropped} older messages of this session were set aside unsummarized; use session_search to look them up.)`;
}
