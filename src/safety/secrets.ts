/**
 * Secret redaction for text about to be written to memory, lessons or skills.
 *
 * Secrets are not a reason to refuse a write (people paste config all the time), but they must never
 * be stored: memory is injected into later prompts and shown to other people. So each recognised
 * secret value is replaced by `[REDACTED:kind]` in the ORIGINAL text, leaving everything around it
 * byte-for-byte intact, so a text without secrets comes back unchanged.
 *
 * Placeholders (`xoxb-...`, `<your token>`, `${{ secrets.X }}`, `process.env.X`, the AWS documentation
 * keys ending in EXAMPLE) are deliberately left alone: redacting them would turn setup instructions
 * into nonsense and protects nothing. Real keys of every format below contain at least one digit, so
 * a digit is required where a placeholder made of words could otherwise match.
 */

import { HIGH_ENTROPY_RULE, LABEL_RULES, PROVIDER_RULES, publicSpans } from "./secret-shapes.ts";
import { hasDigit, isPlaceholder, keyBody, looksLikeCode, marker, randomShaped, secretShaped, trimValue, type Redaction, type RedactResult, type SecretKind, type SecretRule } from "./secret-values.ts";

export type { Redaction, RedactResult, SecretKind } from "./secret-values.ts";
export { isPlaceholder, REDACTED_PREFIX } from "./secret-values.ts";

/**
 * Ordered from most to least specific: a specific rule's marker must be in place before the generic
 * `assignment` rule looks at `TOKEN=...`, so one secret is counted once under its precise kind.
 */
const RULES: readonly SecretRule[] = [
  {
    kind: "private_key",
    // An unterminated block (a truncated paste) is redacted to the end of the text: half a key is still a key.
    re: /(?<s>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|$))/g,
    valid: () => true,
  },
  {
    kind: "slack_app_token",
    re: /(?<![A-Za-z0-9])(?<s>xapp-\d-[A-Za-z0-9-]{10,})/g,
    valid: (s) => hasDigit(s.slice(7)) && !isPlaceholder(s),
  },
  {
    kind: "slack_token",
    re: /(?<![A-Za-z0-9])(?<s>xox[bpars]-[A-Za-z0-9-]{10,})/g,
    valid: (s) => hasDigit(s.slice(5)) && !isPlaceholder(s),
  },
  {
    kind: "anthropic_key",
    re: /(?<![A-Za-z0-9_-])(?<s>sk-ant-[A-Za-z0-9_-]{20,})/g,
    valid: (s) => keyBody(s.slice(7)),
  },
  {
    kind: "openai_key",
    re: /(?<![A-Za-z0-9_-])(?<s>sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})/g,
    valid: (s) => keyBody(s.slice(3)),
  },
  {
    kind: "github_token",
    re: /(?<![A-Za-z0-9_])(?<s>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/g,
    valid: (s) => keyBody(s.slice(4)),
  },
  {
    kind: "aws_access_key",
    re: /(?<![A-Za-z0-9])(?<s>(?:AKIA|ASIA)[0-9A-Z]{16})(?![A-Za-z0-9])/g,
    valid: (s) => !isPlaceholder(s),
  },
  {
    kind: "aws_secret_key",
    re: /(?<pre>(?:aws_secret_access_key|aws_secret_key|secret_access_key|SecretAccessKey)["']?\s*[=:]\s*["']?)(?<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    valid: (s) => !isPlaceholder(s),
  },
  {
    kind: "jwt",
    re: /(?<![\w-])(?<s>eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]{5,})/g,
    valid: () => true,
  },
  {
    kind: "discord_token",
    // user id (base64 of 17-20 digits, so it starts with M, N or O) . timestamp . HMAC
    re: /(?<![A-Za-z0-9_.-])(?<s>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,})(?![A-Za-z0-9_-])/g,
    valid: (s) => hasDigit(s) && !isPlaceholder(s),
  },
  ...PROVIDER_RULES,
  {
    kind: "url_password",
    re: /(?<pre>(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@?#]{0,256}:)(?<s>[^\s/?#]{1,256}?)(?=@[^\s@/?#]{0,256}(?:[/?#:]|\s|$))/gi,
    valid: (s) => !isPlaceholder(s),
  },
  {
    kind: "assignment",
    re: /(?<pre>(?<![A-Za-z0-9])authorization["']?\s*:\s*["']?(?:bearer|basic|token|bot)\s+)(?<s>[A-Za-z0-9._~+/=-]{8,})/gi,
    valid: (s) => !isPlaceholder(s),
  },
  {
    kind: "assignment",
    // `pre` = optional quote, a key ending in a secret-ish word, optional closing quote, separator, optional opening quote.
    re: /(?<pre>(?<![A-Za-z0-9])(?<key>[A-Za-z0-9_.-]{0,40}?(?:password|passwd|pwd|secret|api[_-]?key|apikey|token|access[_-]?key|private[_-]?key))["']?(?<sep>\s*(?::=|=>|[:=])\s*)(?<q>["'`]?))(?<s>(?<=["'`])[^"'`\n]{6,}?(?=["'`])|[^\s"'`]{6,})/gi,
    valid: assignmentValue,
  },
  {
    kind: "assignment",
    // Prose: "my password is hunter2". Only values shaped like a credential, so "the token is valid" stays.
    re: /(?<pre>(?<![A-Za-z0-9])(?:password|passwd|passphrase|passcode|secret|api[ _-]?key|token)\s+(?:is|was)\s+["'`]?)(?<s>[^\s"'`]{6,})/gi,
    valid: (raw) => {
      const v = trimValue(raw);
      return v.length >= 6 && !isPlaceholder(v) && !looksLikeCode(v) && secretShaped(v);
    },
  },
  {
    kind: "assignment",
    // Prose with no known prefix: "the deploy token for prod — ZQ8xk2LmP9vT4wR7", "signing key
    // 9f8e7d6c5b4a3928". A few words may stand between the word and the value, so only a value
    // shaped like a random key counts: "the signing key lives in KMS under alias/release" stays.
    re: /(?<pre>(?<![A-Za-z0-9])(?:password|passwd|passphrase|passcode|secret|token|key|credentials?|creds)(?![A-Za-z0-9])[^\n"'`]{0,40}?[\s:=>\u2013\u2014-]\s*["'`]?)(?<s>[^\s"'`]{10,})/gi,
    valid: (raw) => {
      const v = trimValue(raw);
      return !isPlaceholder(v) && !looksLikeCode(v) && !/^(?:[~.]?\/|https?:)/i.test(v) && randomShaped(v);
    },
  },
  ...LABEL_RULES,
  HIGH_ENTROPY_RULE,
];

/**
 * Generic `key = value` assignments are where prose and code collide ("secret: surprise party on
 * Friday", `user.password = hashedPassword`), so the value must earn its redaction: quoted values
 * and values that end their line are redacted; a value followed by more words on the same line, or a
 * bare identifier assigned with spaces around `=` (code), is redacted only if it looks random.
 */
function assignmentValue(raw: string, m: RegExpExecArray): boolean {
  const v = trimValue(raw);
  if (v.length < 6 || isPlaceholder(v) || looksLikeCode(v)) return false;
  if (/^[~.]?\//.test(v)) return false; // a path (`pwd=/home/alice`), not a password
  const quoted = (m.groups?.q ?? "") !== "";
  if (quoted) return true;
  const sep = m.groups?.sep ?? "";
  const rest = m.input.slice(m.index + m[0].length);
  const endsLine = /^[\s,;]*(?:\n|$)/.test(rest);
  const spacedEquals = /\s=|=\s/.test(sep);
  if (spacedEquals && /^[A-Za-z_$][\w$]*$/.test(v) && !hasDigit(v)) return false;
  if (endsLine && !spacedEquals && !sep.includes(":")) return true;
  if (endsLine && sep.includes(":")) return true;
  return secretShaped(v);
}

/** Replace every recognised secret with `[REDACTED:kind]`; everything else is kept exactly. */
export function redactSecrets(text: string): RedactResult {
  const counts = new Map<SecretKind, number>();
  // Public keys and certificates are kept byte for byte: only the text around them is redacted.
  let out = "";
  let at = 0;
  for (const span of publicSpans(text)) {
    out += redactPart(text.slice(at, span.start), counts) + text.slice(span.start, span.end);
    at = span.end;
  }
  out += redactPart(text.slice(at), counts);
  const redactions: Redaction[] = [...counts].map(([kind, count]) => ({ kind, count }));
  return { text: out, redactions };
}

function redactPart(text: string, counts: Map<SecretKind, number>): string {
  let out = text;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    out = out.replace(rule.re, (...args: unknown[]) => {
      const m = toExec(args);
      const whole = m[0];
      const pre = m.groups?.pre ?? "";
      const secret = m.groups?.s ?? "";
      if (!rule.valid(secret, m)) return whole;
      // Keep sentence punctuation that the generic value pattern swallowed.
      const kept = rule.kind === "assignment" ? trimValue(secret) : secret;
      const tail = secret.slice(kept.length);
      counts.set(rule.kind, (counts.get(rule.kind) ?? 0) + 1);
      return `${pre}${marker(rule.kind)}${tail}`;
    });
  }
  return out;
}

/**
 * `String.prototype.replace` hands the callback (match, ...groups, offset, input, namedGroups); rebuild
 * a RegExpExecArray-like view so rule validators can look at the surrounding text.
 */
function toExec(args: unknown[]): RegExpExecArray {
  const last = args[args.length - 1];
  const hasNamed = typeof last === "object" && last !== null;
  const groups = hasNamed ? (last as Record<string, string | undefined>) : undefined;
  const inputIdx = hasNamed ? args.length - 2 : args.length - 1;
  const input = String(args[inputIdx]);
  const index = Number(args[inputIdx - 1]);
  const captures = args.slice(0, inputIdx - 1).map((a) => (a === undefined ? undefined : String(a)));
  const arr = captures as unknown as RegExpExecArray;
  arr.index = index;
  arr.input = input;
  arr.groups = groups as RegExpExecArray["groups"];
  return arr;
}
