/**
 * The words every floor shares about messages: what an adapter hands the core (`Inbound`, a
 * `FeedbackEvent`), what a turn ends in (`Outbound`), and the hooks a turn calls while it runs.
 * Nothing past the adapter knows which platform a message came from except through these fields.
 * Keep this file small: every later feature builds on it.
 */

export type Platform = "slack" | "discord" | "console";

/** One message from a person, already parsed by an adapter. */
export interface Inbound {
  platform: Platform;
  /** Slack team id, Discord guild id (or "@dm:<user id>" for a person's Discord DMs), "local" for the console. */
  workspace: { externalId: string; name?: string };
  /** `roles`: the author's role ids where the platform has them (Discord), for access rules. */
  author: { externalId: string; displayName?: string; isBot?: boolean; roles?: string[] };
  /** The channel the message was posted in; `isDm` marks a direct conversation with the bot. */
  channel: { externalId: string; isDm: boolean; name?: string };
  /** The platform's thread id (Slack thread_ts, Discord thread channel id); null outside a thread. */
  threadId: string | null;
  /** The platform's id for this message: the dedupe key within a conversation. */
  messageId: string;
  /**
   * The message's permalink on its platform (Slack's archives link, Discord's message URL), made by
   * the adapter: stored with the message (`Message.link`), and what links back to it later (a
   * lesson's correction, the source of a `learn` run) use it, so nothing past the adapter builds a
   * platform's URL. Absent where the platform has none (the console) or the Inbound is no message
   * (a slash command, a click).
   */
  link?: string;
  /** Plain text or Markdown: an adapter spells out its platform's own markup (Slack's `<url|label>`). */
  text: string;
  sentAt: Date;
  /**
   * False for a message that did not address cairn (no DM, mention or reply to cairn) in a thread
   * cairn may follow: the core answers it only where it follows the thread. Default true.
   */
  addressed?: boolean;
  /**
   * Earlier messages the platform showed before cairn was addressed (a thread's history, read when
   * cairn is first mentioned in it). Stored beside the message and shown to the model as recalled
   * data, never as the person's own words.
   */
  context?: string;
}

/** The reply the core hands back to the adapter that asked. */
export interface Outbound {
  /**
   * `ok` an answer; `failed` the model could not be reached (`text` is a polite apology); `refused`
   * the person or channel is not allowed (`text` says so; nothing was stored); `limited` the
   * person's rate limit is spent (`text` says when to come back); `command` the message was a
   * command typed without its slash (`text` points to it, or in a DM is a read-only one's answer; ground/typed-command.ts). The delivery path shows `text`
   * in every case (src/core/delivery.ts); adapters only move the rendered parts.
   */
  status: "ok" | "failed" | "refused" | "limited" | "command";
  text: string;
  conversationId: string | null;
  /** The stored id of the reply (its posted parts are recorded as deliveries under it); null if nothing was stored. */
  replyMessageId: number | null;
}

/**
 * Why the core dropped an inbound message instead of answering it. `taken_over`: another process
 * took the turn over (its lease had run out) and answers it.
 */
export type DropReason = "duplicate" | "bot" | "empty" | "taken_over";

export type HandleResult = { kind: "reply"; reply: Outbound } | { kind: "dropped"; reason: DropReason };

export type { ConversationScope, PersonScope, Scope, WorkspaceScope } from "./scope.ts";

export type MemoryTarget = "user" | "channel" | "team";
export type EntryStatus = "active" | "pending" | "archived";
/** How a memory entry or skill came to be ("curator": a merge by the curator, src/curator). */
export type ProvenanceSource = "tool" | "review" | "reaction" | "learn" | "import" | "curator";

/**
 * A reaction on one of cairn's replies: correction feedback for the learning loop. Adapters deliver
 * every reaction they see on a message the bot posted; the core decides whether it is one of its
 * replies (through the deliveries it recorded) and queues it durably.
 */
export interface FeedbackEvent {
  platform: Platform;
  workspace: { externalId: string };
  reactor: { externalId: string; displayName?: string; isBot?: boolean };
  /** The channel the reacted-to message is in (for Slack the channel id, for Discord the channel or thread id). */
  channel: { externalId: string; isDm: boolean };
  /** The platform id of the reacted-to message: one of the parts of a bot reply. */
  targetMessageId: string;
  /**
   * The emoji as its Unicode character, skin tones and variation selectors removed (src/ground/emoji.ts
   * `bareEmoji`): "👎", "✅". The adapter reduces its platform's form to it (Slack's "thumbsdown::skin-tone-2",
   * Discord's "👎🏽"); a custom emoji with no character keeps its name ("shipit").
   */
  emoji: string;
  /**
   * A platform control whose meaning is fixed (Slack's native feedback buttons under an answer):
   * counted as this signal whatever the emoji settings say. `emoji` is then 👍 or 👎. Absent for a reaction.
   */
  signal?: FeedbackSignal;
  action: "added" | "removed";
  at: Date;
}

/** What feedback on a reply says: it was wrong (a correction follows), or it was right. */
export type FeedbackSignal = "negative" | "positive";

export type FeedbackResult =
  | { kind: "recorded"; replyMessageId: number; jobId: string }
  | { kind: "ignored"; reason: "not_a_reply" | "bot" | "duplicate" | "refused" };

/**
 * Optional hooks an adapter passes to a turn, for the capabilities its platform has. All are called
 * synchronously from the turn's work: keep them cheap, and never throw (queue platform calls).
 */
export interface TurnHooks {
  /** The message is stored (a failure to store is the turn's rejection with NotStoredError). Called at most once. */
  onStored?: () => void;
  /**
   * The message is stored as new here: this process answers it (not a duplicate another replica or
   * an earlier delivery stored first, not refused). Called at most once, before `onStored`.
   */
  onAccepted?: () => void;
  /** A short status while cairn works ("searching history"), for typing indicators or status lines. */
  onProgress?: (status: string) => void;
  /**
   * The model's text as it is written, delta by delta (Markdown, cut anywhere: mid-word, inside a
   * code fence), for adapters that show a draft so nobody waits in silence for a long answer.
   * Given, the turn streams its model calls; absent, it does not.
   *
   * A turn may call the model several times, and only at the end of a call is it known whether the
   * call answered or asked for tools, so every call streams. Adapters keep one draft: append each
   * delta; on `onTextReset`, drop it.
   *
   * Whatever was streamed, the Outbound's `text` is what to show in the end, and the adapter
   * replaces its draft with it: normally the same answer, fully rendered; an apology if the model
   * broke off mid-answer (a broken stream is never retried, so text is never repeated).
   */
  onText?: (delta: string) => void;
  /**
   * The text streamed since the last reset was not the answer: the call ended in tool calls, so it
   * was a preamble ("Let me check the runbook."). Called before those tools run, and only if text
   * was streamed; `onProgress` usually follows at once. A separate hook rather than an iteration
   * number on `onText`: a reset is the one thing an adapter has to act on, and it should not have
   * to track call boundaries to find it.
   */
  onTextReset?: () => void;
}

/** What became of a correction typed in words (the `record_correction` tool). */
export type TypedCorrection =
  | { kind: "recorded"; id: string; replyMessageId: number }
  /** No answer of cairn's to a person precedes the message in its conversation. */
  | { kind: "no_answer" }
  /** That answer was corrected already (a 👎's question, or an earlier typed correction). */
  | { kind: "taken" };
