/**
 * What a secret value looks like, for the redaction rules (secrets.ts, secret-shapes.ts): the
 * kinds, the marker that replaces a value, and the tests that tell a generated key from a word, a
 * placeholder, a reference to where a secret lives, or code that reads one.
 */

export type SecretKind =
  | "slack_token"
  | "slack_app_token"
  | "discord_token"
  | "anthropic_key"
  | "openai_key"
  | "aws_access_key"
  | "aws_secret_key"
  | "github_token"
  | "private_key"
  | "jwt"
  | "url_password"
  | "gitlab_token"
  | "npm_token"
  | "stripe_key"
  | "google_api_key"
  | "webhook_url"
  | "high_entropy"
  | "assignment";

export type Redaction = { kind: SecretKind; count: number };

export type RedactResult = { text: string; redactions: Redaction[] };

/** Marker prefix; anything starting with it was already redacted, which keeps redaction idempotent. */
export const REDACTED_PREFIX = "[REDACTED:";

export const marker = (kind: SecretKind): string => `${REDACTED_PREFIX}${kind}]`;

const PLACEHOLDER_WORDS = /your|example|placeholder|changeme|change_me|dummy|redacted|xxxx|sample|insert|replace/i;
const PLACEHOLDER_EXACT = new Set([
  "password",
  "passwd",
  "secret",
  "token",
  "none",
  "null",
  "nil",
  "undefined",
  "true",
  "false",
  "string",
  "number",
  "boolean",
  "required",
  "optional",
  "empty",
  "hidden",
  "masked",
]);
/** References to where a secret lives, not the secret itself. */
const REFERENCE_PREFIX = /^(?:<|\$|\{\{|%|\[|process\.env|import\.meta\.env|os\.environ|os\.getenv|getenv|env\(|secrets\.|vault:|op:\/\/|!secret|!vault|ref\+)/i;

/** True when a candidate value is a template, an env reference or filler rather than a real secret. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v === "") return true;
  if (v.startsWith(REDACTED_PREFIX)) return true;
  if (REFERENCE_PREFIX.test(v)) return true;
  if (v.includes("...") || v.includes("…") || v.includes("***")) return true;
  if (/^(.)\1*$/u.test(v)) return true;
  if (PLACEHOLDER_EXACT.has(v.toLowerCase())) return true;
  return PLACEHOLDER_WORDS.test(v);
}

export const hasDigit = (s: string): boolean => /\d/.test(s);
export const hasLetter = (s: string): boolean => /[A-Za-z]/.test(s);

/** Looks like a random key body: digits and letters, not a placeholder. */
export const keyBody = (s: string): boolean => hasDigit(s) && hasLetter(s) && !isPlaceholder(s);


export interface SecretRule {
  kind: SecretKind;
  /**
   * Must use the `g` flag and contain a named group `s` (the secret) that ends the match. An optional
   * `pre` group is kept verbatim; trailing context belongs in a lookahead so it is never consumed.
   */
  re: RegExp;
  valid: (secret: string, match: RegExpExecArray) => boolean;
}

/**
 * Shaped like a generated key rather than a word, a name or an id: some run of at least eight
 * letters and digits switches between the two at least three times ("8f7a6d5c", "Tr0ub4dor"),
 * where words, product names, slugs and versions keep them in one or two blocks ("1Password",
 * "release2026", "service-a12").
 */
export function randomShaped(v: string): boolean {
  return v.split(/[^A-Za-z0-9]+/).some((run) => run.length >= 8 && (run.match(/[A-Za-z](?=\d)|\d(?=[A-Za-z])/g)?.length ?? 0) >= 3);
}

/** Code that reads a secret from somewhere (`getToken()`, `req.body.password`) rather than a literal. */
export function looksLikeCode(v: string): boolean {
  return /[()[\]{}]/.test(v) || /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v);
}

/** A value shaped like a credential: it has a digit or a symbol beyond word punctuation. */
export function secretShaped(v: string): boolean {
  return hasDigit(v) || /[^A-Za-z0-9_.-]/.test(v);
}

/** Trailing punctuation after an unquoted value belongs to the sentence or the code, not the secret. */
export function trimValue(v: string): string {
  return v.replace(/[,;.)]+$/, "");
}

