/**
 * An error whose message is written for whoever asked (the model through a tool result, or a
 * person): it says what was refused and what to do next. Stores throw subclasses; the tool registry
 * returns any of them to the model as is, and treats every other error as an internal fault.
 */
export class UserFacingError extends Error {
  override name = "UserFacingError";
}

/**
 * The person's message could not be stored (the database refused or did not answer): nothing of
 * it is kept by the core. Whoever holds it elsewhere (the inbound journal) hands it back later;
 * otherwise the person is told it was not saved.
 */
export class NotStoredError extends Error {
  override name = "NotStoredError";
  constructor(cause: unknown) {
    super(`the message could not be stored: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
