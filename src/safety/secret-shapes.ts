/**
 * Secrets recognised by their shape wherever they stand in a sentence, not only after a label:
 * provider tokens with a fixed prefix, incoming-webhook URLs (the URL is the credential), a value
 * after a password word in the languages people write in, and, last, any long string shaped like a
 * generated key. And what is never a secret however random it looks: public keys and certificates,
 * which are kept byte for byte (`publicSpans`).
 *
 * The generic rule is the one that could eat harmless text, so it asks for all of: 24 characters or
 * more, upper and lower case letters and digits, letters and digits switching often (not a word
 * with a number, not a camelCase name), not a hex hash or UUID (no upper case), not a path segment
 * of a link (document ids), not a subresource-integrity hash.
 */
import { hasDigit, isPlaceholder, keyBody, looksLikeCode, randomShaped, trimValue, type SecretRule } from "./secret-values.ts";

/** Fixed-prefix provider tokens and webhook URLs; run after the older provider rules in secrets.ts. */
export const PROVIDER_RULES: readonly SecretRule[] = [
  {
    kind: "gitlab_token",
    re: /(?<![A-Za-z0-9_-])(?<s>(?:glpat|gldt|glptt|glrt|glcbt|gloas|glsoat|glft)-[A-Za-z0-9_-]{20,})/g,
    valid: (s) => keyBody(s.slice(s.indexOf("-") + 1)),
  },
  {
    kind: "npm_token",
    re: /(?<![A-Za-z0-9_])(?<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])/g,
    valid: (s) => keyBody(s.slice(4)),
  },
  {
    kind: "stripe_key",
    // Secret and restricted keys and webhook signing secrets; publishable keys (pk_) are public.
    re: /(?<![A-Za-z0-9_])(?<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})/g,
    valid: (s) => keyBody(s.slice(s.lastIndexOf("_") + 1)),
  },
  {
    kind: "google_api_key",
    re: /(?<![A-Za-z0-9_-])(?<s>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])/g,
    valid: (s) => keyBody(s.slice(4)),
  },
  {
    kind: "webhook_url",
    // Whoever holds an incoming-webhook URL can post as the app: the path after the host is the secret.
    re: /(?<pre>https?:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)(?<s>[A-Za-z0-9_/-]{16,})/g,
    valid: (s) => hasDigit(s) && !isPlaceholder(s),
  },
  {
    kind: "webhook_url",
    re: /(?<pre>https?:\/\/(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks\/)(?<s>\d{5,}\/[A-Za-z0-9_-]{20,})/g,
    valid: (s) => !isPlaceholder(s),
  },
];

/**
 * Words for "password" people write before one, in the languages cairn meets (short English labels
 * too).
 */
const LABELS = [
  "pw", "pwd", "pass", "passwd", "password", "passphrase", "passcode", "mot de passe", "mdp", "passwort", "kennwort",
  "contraseña", "contrasena", "clave", "senha", "пароль", "hasło", "haslo", "şifre", "sifre", "parola", "wachtwoord",
  "lösenord", "losenord", "passord", "adgangskode", "salasana", "heslo", "jelszó", "mật khẩu", "kata sandi", "κωδικός",
  "סיסמה", "סיסמא", "رمز عبور", "كلمة المرور", "كلمة السر", "पासवर्ड", "รหัสผ่าน", "密码", "密碼", "口令", "パスワード",
  "暗証番号", "비밀번호", "암호",
].join("|");

/**
 * Between the label and the value. Direct: a colon, an equals sign, a dash, or a CJK particle with
 * the value glued to it ("密码是abc12345"). Prose: "is" in the languages above, a spaced particle,
 * or only a space ("password Tq9$mw2L"), where the value must look more like a credential.
 */
const SEPARATOR = String.raw`(?:(?<direct>\s*[：:=]\s*|\s+[-–—]\s+|[是为為はが는은](?=[\x21-\x7e]))|\s(?:is|was|est|ist|lautet|es|era|é|è|это|jest|to|er|är|on|je|هي|هو|है)\s|\s*[是为為はが는은]\s*)`;
const VALUE = String.raw`["'\x60«“„]?)(?<s>[\x21\x23-\x26\x28-\x5f\x61-\x7e]{4,}|[^\s"'\x60，。、」»”]{4,})`;
// A word boundary where words are spaced (Latin, Cyrillic, Greek: "bypass" is not "pass"); CJK and
// Arabic write the label against the word before it ("のパスワード", "وكلمة المرور").
const LABEL = String.raw`(?<![\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}_/.<])(?:${LABELS})`;

export const LABEL_RULES: readonly SecretRule[] = [
  {
    kind: "assignment",
    // Up to a few words between the label and the separator ("mot de passe du wifi est …"); the value
    // is an ASCII run where one is (so Japanese "です" after it stays), else any run without spaces.
    re: new RegExp(String.raw`(?<pre>${LABEL}(?<between>\s[\p{L}\p{N}'’ -]{1,30}?)?${SEPARATOR}${VALUE}`, "giu"),
    valid: (raw, m) => {
      const v = trimValue(raw);
      if (v.length < 4 || isPlaceholder(v) || looksLikeCode(v) || /^(?:[~.]?\/|https?:)/i.test(v)) return false;
      const direct = m.groups?.direct !== undefined && !m.groups?.between;
      // After a colon the value ends at the space: a closing "!" is the password's own.
      return credentialLike(direct ? v : v.replace(/[?!.,;:)]+$/, ""), direct);
    },
  },
  {
    kind: "assignment",
    // Only a space after the label ("password Tq9$mw2L"): a rule of its own, run after the one above,
    // so that "mdp du compte : …" is not ended early at "du".
    re: new RegExp(String.raw`(?<pre>${LABEL}\s+${VALUE}`, "giu"),
    valid: (raw) => {
      const v = trimValue(raw);
      return !isPlaceholder(v) && !looksLikeCode(v) && credentialLike(v.replace(/[?!.,;:)]+$/, ""), false);
    },
  },
];

/**
 * A value typed as a password rather than a word: after a colon or equals sign a digit or a symbol
 * is enough; in prose it needs a digit with a symbol, a digit inside letters, or mixed case, or a
 * generated look. Never a number-and-word name ("1Password", "2FA"), nor words of another script
 * with a number ("90일마다", every 90 days): people type credentials in ASCII letters and symbols.
 */
function credentialLike(v: string, direct: boolean): boolean {
  if (v.length < 4 || /^\d{1,3}$/.test(v) || /^\d\p{L}+$/u.test(v)) return false;
  const digit = /\p{N}/u.test(v);
  const symbol = /[!-,/:-@[-^\x60{-~]/.test(v);
  if (direct) return digit || symbol;
  if (!/[A-Za-z!-,/:-@[-^\x60{-~]/.test(v)) return false;
  const inner = /\p{L}\p{N}+\p{L}/u.test(v);
  const mixed = /[a-z]/.test(v) && /[A-Z]/.test(v);
  return (digit && (symbol || inner || mixed)) || randomShaped(v);
}

/** A long string shaped like a generated key, wherever it stands: the last rule, after every named one. */
export const HIGH_ENTROPY_RULE: SecretRule = {
  kind: "high_entropy",
  re: /(?<![A-Za-z0-9+/_=.:-])(?<s>[A-Za-z0-9+/_-]{24,}={0,2})(?![A-Za-z0-9+/_=.-])/g,
  valid: (s, m) => {
    const before = m.input.slice(Math.max(0, m.index - 8), m.index);
    // A path segment of a link (a document id) or an integrity hash names something public.
    if (/\/$/.test(before) || /base64,$/.test(before) || /^sha(?:1|256|384|512)-/i.test(s)) return false;
    const body = s.replace(/=+$/, "");
    if (encodedText(body)) return false;
    return /[A-Z]/.test(body) && /[a-z]/.test(body) && hasDigit(body) && randomShaped(body) && entropy(body) >= 3.5;
  },
};

/** Base64 of readable text (words and spaces) is data someone encoded, not a key. */
function encodedText(s: string): boolean {
  if (!/^[A-Za-z0-9+/]+$/.test(s) || s.length % 4 === 1) return false;
  const decoded = Buffer.from(s, "base64").toString("latin1");
  return /^[\x20-\x7e\n\t]+$/.test(decoded) && /[a-z]{3,} [a-z]{2,}/i.test(decoded);
}

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

const PUBLIC_BLOCK = /-----BEGIN (?:(?:RSA |EC |DSA |OPENSSH )?PUBLIC KEY|CERTIFICATE(?: REQUEST)?|X509 CRL|PGP PUBLIC KEY BLOCK|PGP SIGNATURE)-----[\s\S]*?-----END [A-Z0-9 ]+-----/g;
const SSH_PUBLIC_KEY = /(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) AAAA[A-Za-z0-9+/]+={0,3}/g;

/** Spans of public keys and certificates: kept as written, never matched by a secret rule. */
export function publicSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (const re of [PUBLIC_BLOCK, SSH_PUBLIC_KEY]) for (const m of text.matchAll(re)) spans.push({ start: m.index, end: m.index + m[0].length });
  spans.sort((a, b) => a.start - b.start);
  // Overlaps (an ssh key quoted inside a block) collapse into the first span.
  return spans.filter((s, i) => i === 0 || s.start >= spans[i - 1]!.end);
}
