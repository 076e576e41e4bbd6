/**
 * A mark that a stored text passed the scanner: the rules' version and the text's hash, kept beside
 * text that prompts show (a skill's description). A new process would otherwise scan every
 * description again on the first session of each workspace: most of that turn's cost.
 *
 * The mark binds the text, where a version column alone (memory's `scannedWith`) would not: a
 * skill's description changes on several paths (an edit, an approved proposal, an undo, a merge, an
 * import), and a path that changed the text but kept an old mark would vouch for text nobody
 * scanned. Here such a mark no longer matches, and the text is scanned when shown.
 */
import { createHash } from "node:crypto";
import { scanStored } from "./engine.ts";
import { RULES_VERSION } from "./rules-version.ts";

function markOf(text: string, version: string): string {
  return `${version}:${createHash("sha256").update(text).digest("base64url").slice(0, 22)}`;
}

/** The mark to store beside `text`: null when it does not pass the current rules (it is scanned, and blocked, when shown). */
export function checkedMark(text: string): string | null {
  return scanStored(text).ok ? markOf(text, RULES_VERSION) : null;
}

/** Whether `mark` says this very text passed the current rules. */
export function markHolds(text: string, mark: string | null | undefined): boolean {
  return typeof mark === "string" && mark === markOf(text, RULES_VERSION);
}
