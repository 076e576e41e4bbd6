/** What a person is told when cairn cannot answer: one wording for every platform. */
import type { Platform } from "./types.ts";

export const MODEL_UNAVAILABLE_REPLY =
  "Sorry, I can't reach my language model right now, so I couldn't answer. Your message is saved; please try again in a few minutes.";
/** The model API refused cairn's key (401/403): no wait fixes that, so the person is told who can. */
export const MODEL_KEY_REFUSED_REPLY =
  "Sorry, I can't answer: cairn's model key was refused, so an admin needs to fix ANTHROPIC_API_KEY. Your message is saved.";
/** DMed to the admins (CAIRN_ADMINS) when a turn meets a refused key, at most once an hour. */
export const MODEL_KEY_REFUSED_ADMIN_NOTICE =
  "cairn's model key was refused (401/403) while answering a question: set a valid ANTHROPIC_API_KEY and restart cairn. Until then everyone who asks is told an admin needs to fix it. (This note comes at most once an hour.)";
/** For an answer that broke off while it was being shown: the person saw part of it disappear. */
export const MODEL_INTERRUPTED_REPLY =
  "Sorry, my answer broke off because my language model stopped responding partway through. Your message is saved; please ask again in a moment.";
/** The database is down and the message is kept in the journal: once per conversation per outage. */
export const STORAGE_DOWN_NOTICE =
  "I can't reach my storage right now, so I can't answer yet. I have your message, and I'll answer it as soon as my storage is back.";
/** The database is down and nothing else kept the message: it is not saved. */
export const NOT_SAVED_REPLY = "Sorry, I couldn't save your message because my storage is unavailable right now. Please send it again in a few minutes.";
export const INTERNAL_ERROR_REPLY = "Sorry, something went wrong on my side while answering. Your message is saved; please try again.";

const PLATFORM_NAMES: Record<Platform, string> = { slack: "Slack", discord: "Discord", console: "the console" };

/** Shown over a reply the platform refused to take. */
export function postFailedApology(platform: Platform): string {
  return `Sorry, I couldn't post my answer here because ${PLATFORM_NAMES[platform]} returned an error. Your message is saved; please try again in a moment.`;
}

/** A command (typed, or run by a view's button) that failed: what the asker is told. */
export const COMMAND_FAILED_REPLY = "Sorry, something went wrong on my side running that command. Please try again.";
/** A view (Discord's `/cairn me|team|skills`) that could not be drawn. */
export const VIEW_FAILED_REPLY = "Sorry, something went wrong on my side while drawing that view. Please try again.";
