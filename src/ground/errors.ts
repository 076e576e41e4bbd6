/**
 * An error whose message is written for whoever asked (the model through a tool result, or a
 * person): it says what was refused and what to do next. Stores throw subclasses; the tool registry
 * returns any of them to the model as is, and treats every other error as an internal fault.
 */
export class UserFacingError extends Error {
  override name = "UserFacingError";
}
