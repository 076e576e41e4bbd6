/**
 * Verdicts: what a write is told when its text is blocked (a message the model and a person can act
 * on) or let through (secrets redacted), and the remembered verdicts on stored text.
 */
import { redactSecrets, type Redaction } from "./secrets.ts";
import { memoize } from "../ground/cache/memoize.ts";
import { findThreats } from "./rules/find.ts";
import type { Finding, ThreatKind } from "./rules/finding.ts";

export type ThreatReason = { kind: ThreatKind; detail: string };

export type ScanVerdict =
  | { ok: true; text: string; redactions: Redaction[] }
  | { ok: false; reasons: ThreatReason[]; message: string };

export type StoredVerdict = { ok: true } | { ok: false; reason: string };

/** An excerpt safe to echo: secrets redacted, no control or invisible characters, short, one line. */
function excerptOf(raw: string): string {
  const clean = redactSecrets(raw)
    .text.replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/g, " ")
    .replace(/"/g, "'")
    .trim();
  return clean.length > 60 ? `${clean.slice(0, 57)}...` : clean;
}

const KIND_TEXT: Record<ThreatKind, { what: string; advice: string; short: string }> = {
  prompt_injection: {
    what: "tries to give instructions to the assistant",
    advice: "Memory holds facts, not instructions to cairn: to keep a team practice, state it as a fact about the team (\"we open a ticket before deploys\"); nothing was saved.",
    short: "prompt injection",
  },
  role_impersonation: {
    what: "imitates a system or chat-role message",
    advice: "Memory holds facts, not conversation turns: drop the role label at the start of the line (write \"OS: macOS 14\", not \"System: macOS 14\"); nothing was saved.",
    short: "role impersonation",
  },
  hidden_comment: {
    what: "contains hidden markup that people reading it would not see",
    advice: "Write it as visible text; nothing was saved.",
    short: "hidden comment",
  },
  invisible_unicode: {
    what: "contains invisible or text-direction Unicode characters that can hide or reorder content",
    advice: "Remove them and write plain text; nothing was saved.",
    short: "invisible unicode",
  },
  homoglyph: {
    what: "mixes look-alike letters from different alphabets in one word",
    advice: "Retype it in a single alphabet; nothing was saved.",
    short: "homoglyph",
  },
  self_tampering: {
    what: "tells the assistant to change its own instructions, configuration or safety checks",
    advice: "Only people who run cairn change how it works: ask an admin to change its settings or persona; nothing was saved.",
    short: "self-tampering",
  },
  persistence: {
    what: "plants access or a foothold (keys, scheduled tasks, startup files)",
    advice: "Memory must not carry steps that grant access or run things on their own: describe the step in words (what it sets up and why) instead; nothing was saved.",
    short: "persistence",
  },
  exfiltration: {
    what: "looks like an attempt to send secrets or private data somewhere",
    advice: "Memory must not carry commands or requests that move data out: describe what the step does in words, without the command or address that sends the data; nothing was saved.",
    short: "exfiltration",
  },
};

function messageFor(findings: readonly Finding[]): string {
  const first = findings[0];
  if (!first) return "Blocked; nothing was saved.";
  const t = KIND_TEXT[first.kind];
  const quoted = first.shown ?? `"${excerptOf(first.excerpt)}"`;
  const others = [...new Set(findings.slice(1).map((f) => KIND_TEXT[f.kind].short).filter((s) => s !== t.short))];
  const also = others.length > 0 ? ` (also: ${others.join(", ")})` : "";
  return `Blocked: this text ${t.what} (${quoted})${also}. ${t.advice}`;
}

/**
 * Check text before it is written. Threats block the write with a message the model and a person can
 * act on; secrets are redacted in place and counted.
 */
export function scanForWrite(text: string): ScanVerdict {
  const findings = findThreats(text);
  if (findings.length > 0) {
    const reasons: ThreatReason[] = findings.map((f) => ({
      kind: f.kind,
      detail: f.kind === "invisible_unicode" ? f.label : `${f.label}: ${f.shown ?? `"${excerptOf(f.excerpt)}"`}`,
    }));
    return { ok: false, reasons, message: messageFor(findings) };
  }
  const { text: redacted, redactions } = redactSecrets(text);
  return { ok: true, text: redacted, redactions };
}

/**
 * Verdicts on stored text are remembered by text. Every new session's prompt re-checks the place's
 * memory entries and skill descriptions, the same texts session after session: scanning them was
 * most of a new session's cost. The rules are fixed for the life of the process, so a verdict never
 * goes stale; the oldest are dropped past the bound.
 */
const STORED_VERDICTS_MAX = 20_000;

/**
 * Re-check an entry stored before the current rules existed. The reason names the rule, never the
 * stored text: it is shown in the prompt as `[BLOCKED: reason]`, and echoing the text would deliver
 * the very instruction being withheld.
 */
export const scanStored: (text: string) => StoredVerdict = memoize((text: string): StoredVerdict => {
  const first = findThreats(text)[0];
  return first ? { ok: false, reason: `${KIND_TEXT[first.kind].short}: ${first.label}` } : { ok: true };
}, STORED_VERDICTS_MAX);
