/**
 * The contract of a memory provider (issue 30): something outside cairn's own stores that finds
 * items for a turn, learns from delivered turns and forgets on erasure. Small on purpose, so
 * providers written later (embeddings first) need nothing else from the core.
 *
 * Every call carries the asker's scope (their person id and workspace) and nothing of anyone else.
 * What a provider returns is outside input: the core validates it, passes each item through the
 * write scanner and quotes it in the prompt with its source, as data and never as instructions
 * (src/providers/providers.ts).
 */
import type { Platform } from "./types.ts";
import type { Scope, WorkspaceScope } from "./scope.ts";

/** One thing a provider found, and where it says it found it (e.g. "notes: doc 42"). */
export interface ProviderItem {
  text: string;
  source: string;
}

/** The message being answered, and the conversation's recent person messages before it, oldest first. */
export interface ProviderTurn {
  text: string;
  recent: readonly string[];
}

/** A turn whose reply reached the platform: the question, the answer and their stored ids. */
export interface SyncedTurn {
  question: string;
  answer: string;
  messageId: number;
  replyMessageId: number;
}

/** What to forget: everything of one person (`forget me`), or of one channel (`listen off`). */
export type ForgetSelector = { kind: "person"; personId: string } | { kind: "channel"; platform: Platform; channelId: string };

export interface MemoryProvider {
  /** Names it in metrics and logs; short and stable. */
  readonly name: string;
  /** Items for this turn; `signal` aborts at the deadline, after which the answer is not waited for. */
  prefetch(scope: Scope, turn: ProviderTurn, signal: AbortSignal): Promise<readonly ProviderItem[]>;
  /** After the reply was delivered; never awaited by the turn. */
  sync(scope: Scope, turn: SyncedTurn): Promise<void>;
  forget(scope: WorkspaceScope, selector: ForgetSelector): Promise<void>;
}
