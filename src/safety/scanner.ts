/**
 * The gate in front of every write to memory, lessons and skills.
 *
 * Anything stored here is later pasted into the assistant's prompt and shown to other people, so a
 * single stored line can steer every future conversation or leak data out of the workspace. The
 * scanner blocks text that tries to (a) hide content (invisible/bidi Unicode, look-alike letters,
 * hidden comments), (b) instruct or impersonate the assistant, or (c) move secrets or conversation
 * data out; and it redacts secrets instead of blocking, because pasting a token by mistake is common
 * and refusing would lose the rest of the note.
 *
 * Matching runs on a normalised copy (NFKC, confusables folded to Latin, markdown emphasis and
 * spacing removed) so that fullwidth, Cyrillic-spelled, spaced-out or leetspeak variants of a phrase
 * meet the same rule; redaction runs on the original so benign text is returned untouched.
 *
 * This module is the entry point; the parts live beside it: rules/ (what counts as a threat, and
 * the normalisation it is matched on), engine.ts (verdicts and messages), rules-version.ts (the
 * hash of rules/ that stored text is marked with), secrets.ts (redaction). No I/O after loading;
 * the only state is scanStored's memory of verdicts, which the fixed rules make safe to keep.
 */
export type { Redaction, SecretKind } from "./secrets.ts";
export { redactSecrets } from "./secrets.ts";
export type { ThreatKind } from "./rules/finding.ts";
export { scanForWrite, scanStored, type ScanVerdict, type StoredVerdict, type ThreatReason } from "./engine.ts";
export { RULES_VERSION } from "./rules-version.ts";
export { checkedMark, markHolds } from "./stored-mark.ts";
