/**
 * Working memory between sessions: a new session of a conversation starts with a short note of the
 * one before it when that one ended by going idle, so "where were we?" has an answer. A session
 * ended on purpose (`/new`, the console starting afresh) is a request for a clean slate: no note. The note is
 * the previous session's summary (its compressed older turns) and its last exchanges, cut to a
 * budget from the end (the latest matters most), leaving out messages whose content went into
 * memory (memory shows it by its own rules). It goes in the session's frozen snapshot (the
 * cached part of the prompt), and only into sessions of the same conversation: the people who
 * could read those messages there anyway.
 */
import type { ConversationScope } from "../ground/types.ts";
import type { HistoryMessage } from "../history/store/store.ts";
import type { ChatSession } from "../agent/session-store.ts";
import { wrapRecalled } from "../tools/search.ts";
import { excerpt } from "../lessons/lesson-case.ts";

/** The note's length at most, in characters (about 400 tokens). */
export const CARRY_OVER_CHARS = 1_600;
/** The previous session's last messages shown at most; each cut to MESSAGE_CHARS. */
const LAST_MESSAGES = 6;
const MESSAGE_CHARS = 300;
/** Above every message id: PostgreSQL's ids are 32-bit integers, and a larger bound is refused. */
const LATEST_ID = 2_147_483_647;

export interface CarryOverDeps {
  previous(scope: ConversationScope, sessionId: string): Promise<ChatSession | null>;
  /** Which messages taught something now in memory: left out, memory shows it by its own rules. */
  taught(scope: ConversationScope, messageIds: readonly number[]): Promise<ReadonlySet<number>>;
  messages(scope: ConversationScope, sessionId: string, afterUserId: number | null, throughUserId: number): Promise<HistoryMessage[]>;
}

/** The note for a new session `sessionId`, or null when the conversation had no session before. */
export async function carryOverNote(deps: CarryOverDeps, scope: ConversationScope, sessionId: string, limit = CARRY_OVER_CHARS): Promise<string | null> {
  const previous = await deps.previous(scope, sessionId);
  if (!previous || previous.endReason !== "idle") return null;
  const after = await deps.messages(scope, previous.id, previous.summaryThroughId, LATEST_ID);
  // What a message taught is in memory now, shown where it applies (a lesson only with the messages
  // it fits): quoting it here would show it with every message of the new session.
  const taught = await deps.taught(scope, after.filter((m) => m.role === "user").map((m) => m.id));
  const lines = after.filter((m) => !taught.has(m.id)).slice(-LAST_MESSAGES).map((m) => `${m.role === "assistant" ? "cairn" : (m.author?.displayName ?? m.author?.externalId ?? "someone")}: ${excerpt(m.text, MESSAGE_CHARS)}`);
  const summary = previous.summary?.trim() ? `Summary of its earlier part: ${previous.summary.trim()}` : null;
  if (!summary && lines.length === 0) return null;
  const body = fitFromEnd([...(summary ? [summary] : []), ...(lines.length ? ["Its last messages:", ...lines] : [])], limit);
  const ended = previous.endedAt ? previous.endedAt.toISOString().slice(0, 16).replace("T", " ") : "recently";
  return [
    `══ LAST SESSION IN THIS CONVERSATION (ended ${ended} UTC): what was being worked on, to pick up from if the person does ══`,
    wrapRecalled("The previous session of this conversation.", body, `carry-over:${previous.id}`),
  ].join("\n");
}

/** Whole lines from the end that fit `limit`; the first kept line is cut from its start if it alone is too long. */
function fitFromEnd(lines: readonly string[], limit: number): string {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (used + line.length + 1 > limit) {
      if (kept.length === 0) kept.unshift(`…${line.slice(line.length - limit + 1)}`);
      break;
    }
    kept.unshift(line);
    used += line.length + 1;
  }
  return kept.join("\n");
}
