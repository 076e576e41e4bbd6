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
 * No I/O after loading (which hashes this file for RULES_VERSION); the only state is scanStored's
 * memory of verdicts, which the fixed rules make safe to keep.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { redactSecrets, type Redaction } from "./secrets.ts";
import { memoize } from "../cache/memoize.ts";

export type { Redaction, SecretKind } from "./secrets.ts";
export { redactSecrets } from "./secrets.ts";

export type ThreatKind =
  | "prompt_injection"
  | "exfiltration"
  | "invisible_unicode"
  | "homoglyph"
  | "hidden_comment"
  | "role_impersonation";

export type ThreatReason = { kind: ThreatKind; detail: string };

export type ScanVerdict =
  | { ok: true; text: string; redactions: Redaction[] }
  | { ok: false; reasons: ThreatReason[]; message: string };

export type StoredVerdict = { ok: true } | { ok: false; reason: string };

/** One rule hit. `label` is our wording (safe to show anywhere); `excerpt` is the offending text. */
interface Finding {
  kind: ThreatKind;
  label: string;
  excerpt: string;
  /** Already-formatted evidence for the message, when quoting the excerpt would be wrong or unreadable. */
  shown?: string;
}

// ---------------------------------------------------------------------------------------------
// (1) Invisible and bidirectional characters
// ---------------------------------------------------------------------------------------------

const INVISIBLE_NAMES: Record<number, string> = {
  0x00ad: "SOFT HYPHEN",
  0x034f: "COMBINING GRAPHEME JOINER",
  0x061c: "ARABIC LETTER MARK",
  0x180e: "MONGOLIAN VOWEL SEPARATOR",
  0x200b: "ZERO WIDTH SPACE",
  0x200c: "ZERO WIDTH NON-JOINER",
  0x200d: "ZERO WIDTH JOINER",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2060: "WORD JOINER",
  0x2061: "FUNCTION APPLICATION",
  0x2062: "INVISIBLE TIMES",
  0x2063: "INVISIBLE SEPARATOR",
  0x2064: "INVISIBLE PLUS",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
  0x3164: "HANGUL FILLER",
  0xfeff: "ZERO WIDTH NO-BREAK SPACE",
  0xffa0: "HALFWIDTH HANGUL FILLER",
  0xfff9: "INTERLINEAR ANNOTATION ANCHOR",
  0xfffa: "INTERLINEAR ANNOTATION SEPARATOR",
  0xfffb: "INTERLINEAR ANNOTATION TERMINATOR",
};

const isVariationSelector = (cp: number): boolean => (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
const isTag = (cp: number): boolean => cp >= 0xe0000 && cp <= 0xe007f;
const isControl = (cp: number): boolean =>
  (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f);

const PICTO = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\u{FE0F}\u{20E3}]/u;
/** Scripts whose spelling genuinely uses ZWJ/ZWNJ (Persian, Indic...); Latin, Greek and Cyrillic never do. */
const JOINING_LETTER = /^[\p{L}\p{M}]$/u;
const LGC_LETTER = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]$/u;

/**
 * A variation selector is legitimate only right after a character it can vary: VS15/VS16 after an
 * emoji-capable character, VS1-VS14 after a non-Latin symbol or letter (math, Mongolian, CJK
 * compatibility), ideographic selectors after a Han character. Anything else (a run of selectors, a
 * selector after a Latin letter) carries no visible meaning and is how data is smuggled invisibly.
 */
function variationAllowed(cp: number, prev: string | undefined): boolean {
  if (prev === undefined) return false;
  const p = prev.codePointAt(0) ?? 0;
  if (isVariationSelector(p) || p === 0x200d || /\s/u.test(prev)) return false;
  if (cp === 0xfe0e || cp === 0xfe0f) return /\p{Emoji}/u.test(prev);
  if (cp >= 0xfe00 && cp <= 0xfe0d) return p > 0x7f && !LGC_LETTER.test(prev);
  return /\p{Script=Han}/u.test(prev);
}

function cpName(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  if (INVISIBLE_NAMES[cp]) return `${hex} ${INVISIBLE_NAMES[cp]}`;
  if (isTag(cp)) return `${hex} TAG CHARACTER`;
  if (isVariationSelector(cp)) return `${hex} VARIATION SELECTOR`;
  if (isControl(cp)) return `${hex} CONTROL CHARACTER`;
  return hex;
}

/**
 * Which code points (by index into `chars`) are hostile. Legitimate uses are spared: ZWJ inside emoji
 * sequences, ZWJ/ZWNJ between letters of scripts that need them, one variation selector after a
 * character (emoji presentation, CJK variants; a run of them is the "emoji smuggling" encoding), flag
 * tag sequences (black flag + lowercase tag letters + CANCEL TAG), and a byte-order mark at the start.
 */
function invisibleIndexes(chars: readonly string[]): number[] {
  const bad: number[] = [];
  const cps = chars.map((c) => c.codePointAt(0) ?? 0);
  let i = 0;
  while (i < cps.length) {
    const cp = cps[i] ?? 0;
    if (cp === 0xfeff && i === 0) {
      i++;
      continue;
    }
    if (cp === 0x1f3f4) {
      // Subdivision flag: 🏴 + tag letters/digits + U+E007F.
      let j = i + 1;
      while (j < cps.length && (((cps[j] ?? 0) >= 0xe0030 && (cps[j] ?? 0) <= 0xe0039) || ((cps[j] ?? 0) >= 0xe0061 && (cps[j] ?? 0) <= 0xe007a))) j++;
      const n = j - i - 1;
      if (n >= 2 && n <= 6 && cps[j] === 0xe007f) {
        i = j + 1;
        continue;
      }
    }
    if (cp === 0x200d || cp === 0x200c) {
      const prev = chars[i - 1] ?? "";
      const next = chars[i + 1] ?? "";
      const emoji = cp === 0x200d && PICTO.test(prev) && PICTO.test(next);
      const script = JOINING_LETTER.test(prev) && JOINING_LETTER.test(next) && !LGC_LETTER.test(prev) && !LGC_LETTER.test(next);
      if (!emoji && !script) bad.push(i);
    } else if (isVariationSelector(cp)) {
      if (!variationAllowed(cp, chars[i - 1])) bad.push(i);
    } else if (INVISIBLE_NAMES[cp] !== undefined || isTag(cp) || isControl(cp)) {
      bad.push(i);
    }
    i++;
  }
  return bad;
}

// ---------------------------------------------------------------------------------------------
// (2) Normalisation and look-alike letters
// ---------------------------------------------------------------------------------------------

/**
 * Cyrillic and Greek letters that render like Latin ones. Small on purpose: these are the letters
 * attackers actually use, and folding more would turn ordinary Russian or Greek into false Latin.
 */
const CONFUSABLES: Record<string, string> = {
  а: "a", е: "e", о: "o", р: "p", с: "c", х: "x", у: "y", і: "i", ѕ: "s", ј: "j", һ: "h", ԁ: "d", ӏ: "l", ԛ: "q", ԝ: "w", ё: "e", ї: "i",
  А: "A", В: "B", Е: "E", К: "K", М: "M", Н: "H", О: "O", Р: "P", С: "C", Т: "T", Х: "X", У: "Y", І: "I", Ј: "J", Ѕ: "S",
  ο: "o", α: "a", ε: "e", ι: "i", ν: "v", κ: "k", ρ: "p", υ: "u", χ: "x",
  Α: "A", Β: "B", Ε: "E", Ζ: "Z", Η: "H", Ι: "I", Κ: "K", Μ: "M", Ν: "N", Ο: "O", Ρ: "P", Τ: "T", Υ: "Y", Χ: "X",
};
const QUOTES: Record<string, string> = { "‘": "'", "’": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"' };

/** Digits and symbols used as letters; folded only in the `compact` form, where they cannot break code. */
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };

const LATIN = /\p{Script=Latin}/u;
const CYR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

interface Forms {
  /** NFKC with invisible characters removed and Unicode line separators turned into newlines. */
  norm: string;
  /** `norm` with look-alikes folded to Latin and typographic quotes made ASCII. */
  deconf: string;
  /** `deconf` without markdown emphasis, so `**ignore** all` reads as `ignore all`. */
  plain: string;
  /** Lowercase letters only, leetspeak folded: catches `i g n o r e`, `i.g.n.o.r.e`, `1gn0re`. */
  compact: string;
  /** `norm` with fenced code blocks blanked (for checks about what a human reader would not see). */
  prose: string;
}

function buildForms(chars: readonly string[], bad: ReadonlySet<number>): Forms {
  const kept = chars.filter((_, i) => !bad.has(i)).join("");
  const norm = kept.normalize("NFKC").replace(/[\u2028\u2029\u0085]/gu, "\n");
  const deconf = [...norm].map((c) => CONFUSABLES[c] ?? QUOTES[c] ?? c).join("");
  const plain = deconf.replace(/[*~`]+/g, "").replace(/(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])/g, " ");
  const compact = plain
    .toLowerCase()
    .replace(/[013457@$]/g, (c) => LEET[c] ?? c)
    .replace(/\P{L}+/gu, "");
  return { norm, deconf, plain, compact, prose: blankFences(norm) };
}

/** Replace the inside of closed ``` / ~~~ fences with spaces; an unclosed fence stays visible to checks. */
function blankFences(text: string): string {
  return text.replace(/^([ \t]*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n[ \t]*\2[ \t]*$/gm, (block) => block.replace(/[^\n]/g, " "));
}

function homoglyphFindings(norm: string): Finding[] {
  const out: Finding[] = [];
  const words = norm.match(/[\p{L}\p{M}]+/gu) ?? [];
  for (const w of words) {
    if (!LATIN.test(w) || !CYR_GREEK.test(w)) continue;
    const foreign = [...w].find((c) => CONFUSABLES[c] !== undefined);
    if (foreign === undefined) continue; // e.g. "10μs", "Яndex": mixed, but nothing that passes for Latin
    const script = scriptName(foreign);
    out.push({ kind: "homoglyph", label: `word mixes Latin with ${script} look-alike letters`, excerpt: w, shown: `"${w}" uses ${script} "${foreign}"` });
    if (out.length >= 3) break;
  }
  if (out.length > 0) return out;
  // A whole word spelled in look-alikes ("ехес") inside Latin text, where nothing else is genuinely
  // Cyrillic or Greek, is a disguise; real Russian or Greek always has letters outside the table.
  if (!LATIN.test(norm)) return out;
  const foreignLetters = [...norm].filter((c) => CYR_GREEK.test(c) && /\p{L}/u.test(c));
  if (foreignLetters.length === 0 || foreignLetters.some((c) => CONFUSABLES[c] === undefined)) return out;
  const disguised = words.find((w) => w.length >= 2 && CYR_GREEK.test(w));
  if (disguised !== undefined) {
    const first = [...disguised][0] ?? "";
    const script = scriptName(first);
    out.push({ kind: "homoglyph", label: `word spelled entirely in ${script} look-alikes of Latin letters`, excerpt: disguised, shown: `"${disguised}" is written in ${script} letters` });
  }
  return out;
}

const scriptName = (c: string): string => (/\p{Script=Greek}/u.test(c) ? "Greek" : "Cyrillic");

// ---------------------------------------------------------------------------------------------
// (3) Instructions to the assistant, role impersonation, hidden markup
// ---------------------------------------------------------------------------------------------

/** Word boundaries that also work for non-ASCII letters (`\b` is ASCII-only in JS). */
const B = String.raw`(?<![\p{L}\p{N}_])`;
const E = String.raw`(?![\p{L}\p{N}_])`;
/** Negations that turn an injection phrase into advice ("don't forget the previous instructions"). */
const NOT = String.raw`(?<!(?:don't|dont|do\s+not|never|not|didn't|won't|shouldn't|cannot|can't)\s+)`;

const rx = (source: string, flags = "giu"): RegExp => new RegExp(source, flags);

interface PatternRule {
  kind: ThreatKind;
  label: string;
  forms: ReadonlyArray<keyof Forms>;
  re: RegExp;
  /** Extra condition on the match (e.g. a second clue nearby); the rule fires only when it holds. */
  also?: (m: RegExpExecArray, src: string) => boolean;
}

const IGNORE = String.raw`(?:ignore|disregard|forget|bypass|set\s+aside|put\s+aside|discard|abandon|throw\s+out|pay\s+no\s+attention\s+to|stop\s+following|do\s+not\s+follow|don't\s+follow|no\s+longer\s+follow)`;
const INSTRUCTION_NOUN = String.raw`(?:instructions?|rules|prompts?|directions?|directives?|guidelines|commands|orders|guidance|constraints|context)`;
const EARLIER = String.raw`(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer)(?:\s+(?:system|developer|original|initial|safety|security|operator))?`;

/** Words naming an AI persona or a lifted restriction: what "you are now ..." turns hostile with. */
const PERSONA = rx(
  String.raw`${B}(?:ai|a\.i\.|assistant|bot|chatbot|model|llm|gpt|chatgpt|claude|dan|persona|character|jailbroken|unrestricted|unfiltered|uncensored|unbound|evil|mode|no\s+longer|free\s+(?:from|of)|without\s+(?:any\s+)?(?:rules|restrictions|limits|limitations|filters|guidelines))${E}`,
);

const ENGLISH_INJECTION: PatternRule[] = [
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:(?:all|any|every|each|of|the|your|my|these|those)\s+)*${EARLIER}\s+${INSTRUCTION_NOUN}${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore all instructions",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:all|any|every)\s+(?:of\s+)?(?:(?:your|the|my)\s+)?(?:instructions|prompts?|directions|guidelines|directives)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore the assistant's own rules",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:all\s+(?:of\s+)?)?(?:your|my)\s+(?:instructions|rules|prompts?|directions|guidelines|directives|programming|training|guardrails|restrictions|system\s+prompt)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore everything said before",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:everything|all|anything|what|whatever|all\s+that)\s+(?:(?:was\s+)?(?:above|before|prior|previously|earlier)|you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|asked)|(?:was|has\s+been)\s+(?:said|written)\s+(?:above|before|earlier))${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore the text above and do something else",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:ignore|disregard)\s+(?:the\s+)?(?:above|preceding)(?:\s+\w+)?\s*(?:,\s*)?(?:and|then)\s+(?:instead|say|respond|reply|output|print|write|tell|answer)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (spaced or disguised)",
    forms: ["compact"],
    re: rx(String.raw`(?<!dont|donot|never|not)(?:ignore|disregard|forget)(?:all|any|every)?(?:of)?(?:the|your|my)?(?:previous|prior|above|earlier|preceding)(?:instructions?|rules|prompts?|directions?|guidelines|commands|directives)`),
  },
  {
    kind: "prompt_injection",
    label: "announces new instructions",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:new|real|actual|secret|hidden|true)\s+(?:system\s+)?(?:instructions?|directives?|orders|rules)\s*[:：]|${B}system\s+(?:instructions?|override)\s*[:：]`),
  },
  {
    kind: "prompt_injection",
    label: "tells the assistant what it now is",
    forms: ["plain"],
    re: rx(String.raw`${B}you(?:'re|\s+are)\s+now\s+([^.!?\n]{0,60})`),
    also: (m) => testNoState(PERSONA, m[1] ?? ""),
  },
  {
    kind: "prompt_injection",
    label: "sets rules for the assistant from now on",
    forms: ["plain"],
    re: rx(String.raw`${B}from\s+now\s+on\s*[,:]?\s*(?:you|the\s+(?:assistant|bot|ai|model)|(?:always|never|only)\s+(?:respond|reply|answer|say|output|include|add|append))(?:\s+(?:will|must|are|should|shall|have\s+to|need\s+to|may\s+only|can\s+only))?${E}`),
    also: (m) => !/^from\s+now\s+on\s*[,:]?\s*you$/i.test(m[0].trim()),
  },
  {
    kind: "prompt_injection",
    label: "asks the assistant to act as another role",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:the\s+|a\s+|an\s+)?(?:system|unrestricted|unfiltered|uncensored|jailbroken|evil|dan)${E}|${B}pretend\s+(?:to\s+be|you\s+are|you're)\s+(?:the\s+|a\s+|an\s+)?(?:system|unrestricted|unfiltered|uncensored|jailbroken|evil|dan|different\s+(?:ai|assistant|model))${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to reveal the assistant's instructions",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:reveal|print|show|output|repeat|display|leak|dump|recite|tell\s+me|give\s+me|write\s+out|share|paste|spell\s+out)\s+(?:me\s+)?(?:your|the\s+(?:full|entire|complete|hidden|original|initial|exact|verbatim))\s+(?:\w+\s+){0,2}?(?:system\s+prompt|instructions|initial\s+prompt|hidden\s+prompt|prompt|guidelines|configuration)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "tries to replace the system prompt",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}(?:ignore|override|replace|overwrite|forget|disregard|bypass)\s+(?:\w+\s+){0,2}?system\s+prompt${E}|${B}(?:new|updated|real|override)\s+system\s+prompt\s*[:：]|${B}system\s+prompt\s*[:：]\s*\S|${B}(?:your|the)\s+system\s+prompt\s+(?:is\s+now|has\s+(?:been\s+)?(?:replaced|changed|updated))`),
  },
  {
    kind: "prompt_injection",
    label: "asks to override the assistant's rules",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:override|bypass|circumvent|disable|ignore|turn\s+off)\s+(?:all\s+(?:of\s+)?)?(?:your|the\s+(?:assistant|system|bot|model|ai)(?:'s)?)\s+(?:\w+\s+)?(?:rules|instructions|guidelines|restrictions|safety|safeguards|filters|programming|policies|constraints|guardrails)${E}|${B}override\s+(?:the\s+)?(?:instructions|guidelines)${E}|${B}(?:override|bypass|disable|turn\s+off)\s+(?:the\s+|all\s+|any\s+)?(?:safety|content)\s+(?:rules|filters?|guidelines|restrictions|guardrails|policies)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to keep something from the user",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:do\s+not|don't|dont|never)\s+(?:tell|inform|mention|reveal|disclose|say)\s+(?:this\s+|it\s+|anything\s+|that\s+)?(?:to\s+)?(?:the\s+)?(?:users?|humans?|requester|operator)(?!'s)${E}|${B}without\s+(?:telling|informing|alerting)\s+(?:the\s+)?(?:users?|humans?)${E}|${B}(?:do\s+not|don't|dont|never)\s+let\s+(?:the\s+)?(?:users?|humans?)\s+(?:know|find\s+out|notice|see\s+this)${E}|${B}(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?(?:users?|humans?)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "jailbreak wording",
    forms: ["plain"],
    re: rx(String.raw`${B}jail\s?(?:break|breaks|broken|breaking)${E}|${B}do\s+anything\s+now${E}|${B}dan\s+mode${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks the assistant to switch to developer mode",
    forms: ["plain"],
    re: rx(String.raw`${B}developer\s+mode${E}`),
    also: (m, src) =>
      /you\s+(?:are|will|must|can\s+now|now)|you're|assistant|chatgpt|claude|\bai\b|llm|language\s+model|uncensored|unfiltered|restrictions|content\s+polic|no\s+limits|anything\s+now|your\s+(?:responses?|answers?|outputs?|rules)/i.test(
        src.slice(Math.max(0, m.index - 100), m.index + m[0].length + 100),
      ),
  },
  {
    kind: "prompt_injection",
    label: "addresses an AI reading the text",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:if|when)\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|chatbot|bot|agent|gpt|claude)${E}|${B}(?:note|message|instructions?|attention|important)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|assistant|bot|model|language\s+model|agent|claude|chatgpt)s?${E}\s*[:：,!]|${B}(?:ai|llms?|assistants?|agents?|claude|chatgpt|bots?)\s+(?:reading|processing|parsing|summari[sz]ing)\s+this${E}`),
  },
  {
    kind: "exfiltration",
    label: "asks the assistant to put secrets into its replies",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:include|append|add|insert|embed|put|print|output)\s+(?:the\s+|your\s+|all\s+|any\s+|our\s+)*(?:[\w-]+\s+)?(?:api\s+keys?|keys?|tokens?|secrets?|passwords?|credentials|system\s+prompt|env(?:ironment)?\s+variables)\s+(?:in|into|to|at\s+the\s+end\s+of)\s+(?:your|every|each|all|the\s+next)\s+(?:\w+\s+)?(?:reply|replies|response|responses|answer|answers|message|messages|output)${E}`),
  },
];

/** Injection phrasing in other languages; matched on `norm` (Cyrillic must not be folded to Latin). */
const ROMANCE_VERB = String.raw`(?:ignora|ignoren|ignore|ignorez|ignorer|ignorar|ignorate|olvida|olvide|olviden|olvidar|oublie|oubliez|oublier|dimentica|dimenticate|esque[çc]a|esquece|descarta|desconsidera|haz\s+caso\s+omiso\s+(?:a|de))`;
const ROMANCE_NOUN = String.raw`(?:instrucciones|instrucci[oó]n|indicaciones|reglas|[oó]rdenes|directrices|instructions|consignes|r[eè]gles|directives|istruzioni|regole|indicazioni|instru[çc][õo]es|regras|orienta[çc][õo]es|prompts?)`;
const ROMANCE_EARLIER = String.raw`(?:anteriores|previas|precedentes|pr[eé]c[eé]dentes|ant[eé]rieures|precedenti|anteriori|pr[eé]vias|originales|originali|ci-dessus|de\s+arriba|sopra|acima)`;

const MULTILINGUAL_INJECTION: PatternRule[] = [
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (German)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte|missachten\s+sie|übergeh(?:e|en\s+sie)?)\s+(?:sie\s+)?(?:bitte\s+)?(?:(?:alle|sämtliche|die|deine|ihre|meine|der)\s+)*(?:bisherigen|vorherigen|vorigen|obigen|früheren|vorangegangenen|ursprünglichen|alle|sämtliche|deine|ihre)\s+(?:anweisungen|instruktionen|regeln|befehle|vorgaben|anordnungen|prompts?)${E}|${B}(?:alle\s+|sämtliche\s+|die\s+)?(?:bisherigen|vorherigen|vorigen|obigen|früheren)\s+(?:anweisungen|instruktionen|regeln|befehle)\s+(?:zu\s+)?(?:ignorieren|vergessen|missachten)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Spanish/French/Italian/Portuguese)",
    forms: ["norm"],
    re: rx(String.raw`${B}${ROMANCE_VERB}\s+(?:todas|toutes|tutte|todos|tous)\s+(?:(?:las|les|le|as|os|tus|tes|vos|sus|tue)\s+)?(?:\p{L}+\s+)?${ROMANCE_NOUN}${E}|${B}${ROMANCE_VERB}\s+(?:las|les|le|as|os|tus|tes|vos|sus|tue|suas|vostre|gli)\s+(?:\p{L}+\s+)?${ROMANCE_NOUN}\s+${ROMANCE_EARLIER}${E}|${B}${ROMANCE_VERB}\s+(?:tus|tes|vos|le\s+tue|tue|suas|as\s+suas|vostre|le\s+vostre)\s+${ROMANCE_NOUN}${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Russian)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не\s+обращай(?:те)?\s+внимания\s+на)\s+(?:все\s+|всё\s+)?(?:предыдущие|прошлые|прежние|вышеуказанные|свои|твои|ваши|все)\s+(?:инструкции|указания|правила|команды|инструкций)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Chinese)",
    forms: ["norm", "compact"],
    re: rx(String.raw`(?:忽略|无视|無視|忘记|忘記|忽视|忽視|不要理会|不要理會|不理会|不理會|跳过|跳過)\s*(?:掉)?\s*(?:你\s*)?(?:之前|以前|上面|上述|先前|前面|此前|原来|原來|原有|所有|全部|一切|你的|系统|系統)[^。\n]{0,8}?(?:指令|指示|说明|說明|规则|規則|提示|命令|设定|設定)`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Japanese)",
    forms: ["norm", "compact"],
    re: rx(String.raw`(?:以前|前|これまで|上記|先|今まで|すべて|全て)[^。\n]{0,10}?(?:指示|命令|ルール|指令|プロンプト)[^。\n]{0,8}?(?:無視|忘れ)`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Korean)",
    forms: ["norm"],
    re: rx(String.raw`(?:이전|앞의|위의|모든|기존)[^.\n]{0,12}?(?:지시|명령|지침|규칙|프롬프트)[^.\n]{0,8}?무시`),
  },
  {
    kind: "prompt_injection",
    label: "tells the assistant what it now is (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|${B}ahora\s+eres|${B}tu\s+es\s+maintenant|${B}vous\s+[eê]tes\s+maintenant|${B}ora\s+sei|${B}agora\s+voc[eê]\s+[eé]|${B}ты\s+теперь|你现在是|你現在是|あなたは今)([^.!?。\n]{0,50})`),
    also: (m) =>
      /ki|ia|ai|assistent|asistente|assistant|assistente|bot|dan|modell|modelo|modèle|uneingeschränkt|ohne\s+(?:regeln|einschränkungen)|sin\s+(?:restricciones|reglas|límites)|sans\s+(?:restrictions|règles|limites)|senza\s+(?:restrizioni|regole)|sem\s+restrições|без|助手|没有限制|沒有限制|不受|无限制|無限制|制限/iu.test(m[1] ?? ""),
  },
  {
    kind: "prompt_injection",
    label: "sets rules for the assistant from now on (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}ab\s+(?:jetzt|sofort)|${B}von\s+nun\s+an|${B}a\s+partir\s+de\s+ahora|${B}de\s+ahora\s+en\s+adelante|${B}à\s+partir\s+de\s+maintenant|${B}désormais|${B}d'ora\s+in\s+poi|${B}a\s+partir\s+de\s+agora|从现在开始|從現在開始|从现在起|從現在起)\s*[,，、]?\s*(?:musst\s+du|wirst\s+du|bist\s+du|sollst\s+du|du\s+(?:musst|wirst|bist|sollst)|debes|vas\s+a|eres|tienes\s+que|tu\s+(?:dois|vas|es)|vous\s+(?:devez|êtes)|devi|sei|voc[eê]\s+deve|你\s*(?:必须|必須|将|將|要|只能|是|应该|應該))`),
  },
  {
    kind: "prompt_injection",
    label: "asks to keep something from the user (non-English)",
    forms: ["norm"],
    re: rx(String.raw`${B}sag(?:e|en)?\s+(?:es\s+|das\s+)?(?:dem|den)\s+(?:benutzer|nutzer|user|anwender)n?\s+nicht${E}|${B}ohne\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer|user)n?\s+(?:etwas\s+|davon\s+)?zu\s+sagen|${B}no\s+(?:se\s+lo\s+|le\s+)?(?:digas|diga|menciones|informes)\s+(?:nada\s+)?(?:esto\s+)?al\s+usuario${E}|${B}sin\s+decirle\s+al\s+usuario${E}|${B}ne\s+(?:le\s+)?(?:dis|dites)\s+(?:rien\s+|pas\s+)?(?:pas\s+|rien\s+)?(?:à|a)\s+l'utilisateur|${B}sans\s+(?:le\s+)?dire\s+(?:à|a)\s+l'utilisateur|${B}non\s+dir(?:e|lo)\s+(?:niente\s+)?all'utente|不要\s*(?:告诉|告訴|透露给|透露給|通知)\s*(?:用户|用戶|使用者)|ユーザーに(?:は)?(?:言わ|伝え|知らせ)ないで`),
  },
  {
    kind: "prompt_injection",
    label: "asks to reveal the assistant's instructions (non-English)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:zeig(?:e)?|verrate|gib)\s+(?:mir\s+)?(?:deinen|den|deine)\s+(?:system-?prompt|systemanweisungen|anweisungen)${E}|${B}(?:revela|muestra|muéstrame|dime)\s+(?:tu|el|tus)\s+(?:prompt|instrucciones)(?:\s+del\s+sistema)?${E}|${B}(?:révèle|montre|affiche)(?:-moi)?\s+(?:ton|le|tes)\s+(?:prompt|instructions)(?:\s+système)?${E}|(?:显示|顯示|输出|輸出|泄露|洩露|透露|告诉我|告訴我|打印|重复|重複)[^。\n]{0,6}?(?:系统提示|系統提示|系统指令|系統指令|提示词|提示詞|初始指令)|システムプロンプトを(?:表示|教え|出力)`),
  },
  {
    kind: "prompt_injection",
    label: "announces new instructions (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}neue\s+anweisungen|${B}nuevas\s+instrucciones|${B}nouvelles\s+instructions|${B}nuove\s+istruzioni|${B}novas\s+instru[çc][õo]es|${B}новые\s+инструкции|新(?:的)?(?:指令|指示)|新しい指示)\s*[:：]`),
  },
];

/** Tag names are matched all-lowercase or all-uppercase: `<System>` is a JSX component, not a turn marker. */
const ROLE_TAG = String.raw`system|assistant|im_start|im_end|im_sep|system_prompt|system-prompt|system-reminder|system_message|function_calls|function_results|tool_result|tool_use`;

const ROLE_RULES: PatternRule[] = [
  {
    kind: "role_impersonation",
    label: "line written as a system or assistant turn",
    forms: ["plain"],
    // Content must follow on the same line: a bare `system:` YAML key with a nested block is structure, not a turn.
    re: rx(String.raw`^[ \t>]*(?:system|assistant|human)(?:\s+(?:message|prompt|note|override|instructions?))?[ \t]*[:：][ \t]*\S[^\n]*`, "gimu"),
  },
  {
    kind: "role_impersonation",
    label: "bracketed role marker",
    forms: ["plain"],
    re: rx(String.raw`\[\s*/?\s*(?:system|assistant|inst|sys|system\s+message|system\s+prompt)\s*\](?!\(|\[|:\s*<?(?:https?:|mailto:|/|#|\.))|<</?SYS>>`),
  },
  {
    kind: "role_impersonation",
    label: "chat-template role tag",
    forms: ["deconf"],
    re: new RegExp(String.raw`(?<![\w$.])<\s*/?\s*(?:${ROLE_TAG}|${ROLE_TAG.toUpperCase()})(?:\s[^<>\n]{0,200})?>`, "gu"),
  },
  {
    kind: "role_impersonation",
    label: "special model token",
    forms: ["deconf"],
    re: rx(String.raw`<\|\s*[A-Za-z_]{2,30}\s*\|>`),
  },
  {
    kind: "role_impersonation",
    label: "heading written as a prompt section",
    forms: ["plain"],
    re: rx(String.raw`^[ \t]*#{1,6}[ \t]*(?:system|instructions?|response|system\s+prompt|system\s+message)[ \t]*[:：]|^[ \t]*#{1,6}[ \t]*(?:new|secret|hidden|real|actual)\s+(?:system\s+)?instructions${E}`, "gimu"),
  },
];

const HIDDEN_RULES: PatternRule[] = [
  {
    kind: "hidden_comment",
    label: "HTML comment",
    forms: ["prose"],
    re: rx(String.raw`<!--[\s\S]*?(?:-->|$)`),
  },
  {
    kind: "hidden_comment",
    label: "markdown comment",
    forms: ["prose"],
    re: rx(String.raw`^[ \t]*\[[^\]\n]*\]:[ \t]*(?:#|<>)[ \t]*[("']`, "gimu"),
  },
  {
    kind: "hidden_comment",
    label: "HTML element hidden from view",
    forms: ["prose"],
    re: rx(String.raw`<[a-z][^<>]{0,300}\sstyle\s*=\s*["'][^"'<>]{0,300}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:[;"']|$)|opacity\s*:\s*0\s*(?:[;"']|$))|<[a-z][^<>]{0,300}\shidden(?:\s|=|/?>)`),
  },
];

// ---------------------------------------------------------------------------------------------
// (4) Exfiltration
// ---------------------------------------------------------------------------------------------

/** Variables that say nothing secret; `curl localhost:$PORT/health` is ordinary. */
const HARMLESS_VARS = new Set(["HOME", "PWD", "PORT", "TMPDIR", "VERSION", "ARCH", "OS", "PATH", "SHELL", "LANG", "TERM", "NODE_ENV", "STAGE", "REGION", "BRANCH"]);
const SENSITIVE_NAME = /API[_-]?KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIAL|PRIVATE[_-]?KEY|ACCESS[_-]?KEY|SESSION|COOKIE|AUTH/i;
const SENSITIVE_UPPER = /(?<![A-Za-z_])[A-Z_]{0,40}?(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z_]{0,40}(?![a-z])/;

const NET_TOOL = rx(
  String.raw`(?<![\w.-])(?:curl|wget|invoke-webrequest|invoke-restmethod|iwr|irm|ncat|netcat|socat|nslookup|telnet|httpie|sendBeacon|XMLHttpRequest|new\s+WebSocket)(?![\w-])|(?<![\w.-])nc\s+(?:-\w+\s+)*[\w.$-]+\s+\d{2,5}(?!\w)|(?<![\w.])(?:fetch|axios(?:\.\w+)?|requests\.(?:get|post|put|patch)|http\.request|https\.request|urllib\.request\.urlopen)\s*\(`,
);

/** Physical lines joined across shell (`\`) and PowerShell (backtick) continuations. */
function logicalLines(text: string): string[] {
  return text.replace(/[\\`][ \t]*\r?\n/g, " ").split(/\r?\n/);
}

/** Shell substitution that runs a command: `$(...)`, or backticks around a command word. */
const SUBSTITUTION = /\$\(|`\s*(?:cat|whoami|id|hostname|env|printenv|uname|base64|head|tail|ls|pwd|echo)\b[^`]*`|%[A-Z_]+%/i;
const UPLOAD_FILE = /\s-d\s*@|--data(?:-binary|-raw|-urlencode|-ascii)?[\s=]+["']?@|\s-F\s+["']?[\w-]+=@|--form\s+["']?[\w-]+=@|\s-T\s+\S|--upload-file/;
const PIPE_TO_SHELL = /\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh(?![\w-])|\|\s*(?:iex|invoke-expression)(?![\w-])/i;
const ENV_DATA = /process\.env\b(?!\.(?:PORT|HOST|NODE_ENV)\b)|os\.environ|os\.getenv|document\.cookie|localStorage|sessionStorage/;

function commandFindings(deconf: string): Finding[] {
  const out: Finding[] = [];
  const push = (label: string, excerpt: string): void => {
    out.push({ kind: "exfiltration", label, excerpt });
  };
  for (const line of logicalLines(deconf)) {
    NET_TOOL.lastIndex = 0;
    const tool = NET_TOOL.exec(line);
    if (tool) {
      // Inside a markdown `code span` the command ends at the closing backtick.
      const ticksBefore = (line.slice(0, tool.index).match(/`/g) ?? []).length;
      let cmd = line.slice(tool.index);
      if (ticksBefore % 2 === 1 && cmd.includes("`")) cmd = cmd.slice(0, cmd.indexOf("`"));
      // A code call (`fetch(`...) uses `${x}` for its own variables; only shell `$VAR` is the environment.
      const isCodeCall = tool[0].trimEnd().endsWith("(");
      const envVars = isCodeCall ? [] : [...cmd.matchAll(/\$(?:env:)?\{?([A-Za-z_][A-Za-z0-9_]*)/gi)].map((m) => m[1] ?? "");
      if (envVars.some((v) => !HARMLESS_VARS.has(v.toUpperCase()))) push("network command carrying an environment variable", cmd);
      else if (!isCodeCall && SUBSTITUTION.test(cmd)) push("network command with command substitution", cmd);
      else if (ENV_DATA.test(cmd)) push("network call carrying environment data or cookies", cmd);
      else if (SENSITIVE_UPPER.test(cmd)) push("network command carrying a secret", cmd);
      else if (UPLOAD_FILE.test(cmd)) push("network command uploading a local file", cmd);
      else if (PIPE_TO_SHELL.test(cmd)) push("downloads a script and pipes it into a shell", cmd);
    }
    const pipeOut = /\|\s*(?:curl|wget|nc|ncat|netcat|socat)(?![\w-])/i.exec(line);
    if (pipeOut) push("pipes data into a network command", line.slice(Math.max(0, pipeOut.index - 40)));
    const run = /(?<![\w-])(?:iex|invoke-expression)(?![\w-])[^\n]*(?:downloadstring|iwr|invoke-webrequest|irm|invoke-restmethod)|downloadstring[^\n]*\|\s*(?:iex|invoke-expression)|(?<![\w-])(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:\$\(|<\()\s*(?:curl|wget)/i.exec(line);
    if (run) push("downloads a script and runs it", run[0]);
  }
  return out;
}

/** Files whose contents are credentials. A `.pub` key is public and may be shown. */
const SEP = String.raw`[\\/]`;
const SECRET_PATHS = String.raw`(?<![\w-])\.ssh(?:${SEP}(?![\w.-]*\.pub${E})|(?![\w\\/.-]))|${B}id_(?:rsa|dsa|ecdsa|ed25519)(?!\.pub)${E}|${SEP}etc${SEP}(?:passwd|shadow|sudoers)${E}|\.aws${SEP}credentials|(?<![\w.-])\.netrc|\.git-credentials|(?<![\w.-])\.npmrc|(?<![\w.-])\.pypirc|\.kube${SEP}config|\.docker${SEP}config\.json|\.config${SEP}gh${SEP}hosts\.yml`;
const SHELL_READ = String.raw`cat|less|more|head|tail|type|get-content|gc|base64|xxd|od|strings|nl|tac`;
const NL_EXPOSE = String.raw`print|show|display|dump|output|reveal|leak|send|upload|exfiltrate|paste|post|share|email|forward`;

const EXFIL_RULES: PatternRule[] = [
  {
    kind: "exfiltration",
    label: "reads a credentials file",
    forms: ["deconf"],
    re: rx(String.raw`(?<![\w.-])(?:${SHELL_READ}|${NL_EXPOSE}|read|open|copy|cp|scp|rsync|tar|zip)${E}[^\n]{0,80}?(?:${SECRET_PATHS})`),
  },
  {
    kind: "exfiltration",
    label: "reads the .env file",
    forms: ["deconf"],
    re: rx(String.raw`(?<![\w.-])(?:${SHELL_READ}|${NL_EXPOSE}|contents\s+of)${E}[^\n]{0,60}?(?<![\w.-])\.env(?![\w.-])`),
  },
  {
    kind: "exfiltration",
    label: "dumps the environment",
    forms: ["deconf"],
    re: rx(String.raw`(?<![\w.-])printenv${E}(?:\s+([A-Za-z_][A-Za-z0-9_]*))?([^\n]*)|(?<![\w.$-])env\s*(?:\||>)|(?<![\w-])(?:get-childitem|gci|ls|dir)\s+env:|(?:JSON\.stringify|console\.(?:log|info|error)|Object\.(?:entries|values))\s*\(\s*process\.env\s*[,)]|print\s*\(\s*(?:dict\s*\()?\s*os\.environ\s*\)?\s*\)`),
    also: (m) => {
      if (!/^printenv/i.test(m[0])) return true;
      const name = m[1];
      const rest = m[2] ?? "";
      return name === undefined || SENSITIVE_NAME.test(name) || /[|>]/.test(rest);
    },
  },
  {
    kind: "exfiltration",
    label: "image that sends data in its URL",
    forms: ["deconf"],
    // Images load by themselves when rendered, so a templated query string leaks without a click.
    re: rx(String.raw`(?:!\[[^\]\n]*\]\(\s*<?|<img\s[^<>]{0,300}src\s*=\s*["']?)https?://[^)\s"'>]*\?[^)\s"'>]*(?:\{[^}]*\}|\$\w|%7B|(?:secret|token|key|password|conversation|history|memory|data|q|d)=)`),
  },
  {
    kind: "exfiltration",
    label: "link with a template for secrets or conversation data",
    forms: ["deconf"],
    re: rx(String.raw`https?://[^\s)"'>]*(?:\{\{?|%7B%7B|%7B|\$\{)\s*(?:secrets?|tokens?|api_?keys?|passwords?|credentials|conversation|chat|history|memory|messages|env|system_?prompt)`),
  },
  {
    kind: "exfiltration",
    label: "asks to send secrets or conversation data to an outside address (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}(?:schick|schicke|schicken|sende|senden|übermittle|übermitteln|leite|lade|envía|envia|enviar|manda|mandar|reenvía|envoie|envoyez|envoyer|transfère|transférez|invia|inviare|envie|отправь|отправьте|перешли|перешлите)${E}|发送|发给|發送|發給|转发|轉發|上传|上傳|送信|転送|送って)[^\n]{0,120}?(?:https?://|[\w.+-]+@[\w-]+\.[\w.]+)`),
    // Word order varies (Chinese puts the object before the verb), so the noun may be anywhere on the line.
    also: (m, src) =>
      /passw|kennw|schlüssel|token|geheimnis|zugangsdaten|verlauf|contraseñ|clave|credencial|historial|conversaci|mot\s+de\s+passe|mots\s+de\s+passe|clés?\b|identifiants|historique|chiav|credenzial|cronologia|senha|chave|histórico|密码|密碼|密钥|密鑰|令牌|聊天记录|聊天記錄|对话|對話|凭证|憑證|パスワード|トークン|鍵|会話|履歴|пароль|ключ|токен|переписк|истори/iu.test(lineAround(src, m.index)),
  },
];

/** What makes sending something somewhere an exfiltration rather than a status update. */
const SENSITIVE_NOUN = rx(
  String.raw`${B}(?:secrets?|api[\s_-]?keys?|keys|tokens?|credentials?|creds|passwords?|passwd|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+(?:variables|vars|file)|\.env|conversations?|chat\s+(?:history|logs?)|(?:chat|conversation|message|full|entire|whole|dm|channel|slack|discord|search)\s+history|history\s+of\s+(?:the\s+|this\s+)?(?:chat|conversation|channel|messages)|(?:all|every|private|direct|dm|previous|past|user'?s?|their|the\s+user'?s?)\s+(?:\w+\s+)?messages?|dms|(?:all|every|each|any|private|their|user'?s?)\s+(?:\w+\s+)?dms?|(?:your|team|the\s+team'?s?|all|stored|entire|whole|cairn'?s?|bot'?s?)\s+memor(?:y|ies)|memories|memory\s+(?:entries|contents|store|notes)|transcripts?|system\s+prompt|cookies?|session\s+(?:ids?|tokens?|cookies?)|(?:user|people'?s|personal|all|every)\s+profiles?|personal\s+data|pii)${E}`,
);
const SEND_VERB = rx(String.raw`${B}(?:send|sends|sending|post|posting|upload|uploading|forward|forwarding|email|e-mail|mail|exfiltrate|transmit|leak|dump|copy|paste|submit|deliver|relay|beacon|push|sync|mirror|share)${E}`);
const DESTINATION = rx(
  String.raw`${B}(?:to|at|into|via|on|onto)\s+(?:https?://|hxxps?://|ftp://|www\.|[\w.+-]+@[\w-]+\.[\w.]+|<[@#][\w|.-]+>|@[\w.-]+|[\w-]+\.(?:ngrok|webhook\.site|requestbin|pipedream|burpcollaborator|interact\.sh|oast))`,
);
const WEBHOOK = rx(
  String.raw`hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks|webhook\.site|requestbin|pipedream\.net|\.ngrok(?:-free)?\.(?:io|app)|burpcollaborator|interact\.sh|oast\.(?:fun|me|pro|live|site|online)|canarytokens|pastebin\.com|transfer\.sh|hookbin`,
);

function lineAround(src: string, index: number): string {
  const start = src.lastIndexOf("\n", index) + 1;
  const end = src.indexOf("\n", index);
  return src.slice(start, end === -1 ? undefined : end);
}

function testNoState(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  const hit = re.test(s);
  re.lastIndex = 0;
  return hit;
}

/** The paragraph-bounded stretch of `text` from `before` characters ahead of `from` to `after` past `to`. */
function windowAround(text: string, from: number, to: number, before: number, after: number): { start: number; text: string } {
  const paraStart = text.lastIndexOf("\n\n", from);
  const paraEnd = text.indexOf("\n\n", to);
  const start = Math.max(0, paraStart, from - before);
  const end = Math.min(text.length, paraEnd === -1 ? text.length : paraEnd, to + after);
  return { start, text: text.slice(start, end) };
}

/**
 * "Send/post/forward X to <url|email|@someone>" is fine for a status report; it is exfiltration when
 * X is a secret or conversation data. Checked per destination, against the same paragraph: mostly the
 * text before it (where the verb and object normally are) and a little after ("to https://x: all the tokens").
 */
function sendFindings(plain: string): Finding[] {
  const out: Finding[] = [];
  for (const m of plain.matchAll(DESTINATION)) {
    const w = windowAround(plain, m.index, m.index + m[0].length, 240, 80);
    SEND_VERB.lastIndex = 0;
    const verb = SEND_VERB.exec(w.text);
    if (verb && testNoState(SENSITIVE_NOUN, w.text)) {
      const excerpt = plain.slice(Math.min(w.start + verb.index, m.index), m.index + m[0].length);
      out.push({ kind: "exfiltration", label: "asks to send secrets or conversation data to an outside address", excerpt });
      break;
    }
  }
  for (const hook of plain.matchAll(WEBHOOK)) {
    const w = windowAround(plain, hook.index, hook.index + hook[0].length, 300, 300);
    if (testNoState(SENSITIVE_NOUN, w.text)) {
      out.push({ kind: "exfiltration", label: "webhook or capture URL combined with secrets or history", excerpt: w.text });
      break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------------

function runRules(rules: readonly PatternRule[], forms: Forms, into: Finding[]): void {
  for (const rule of rules) {
    for (const formName of rule.forms) {
      const src = forms[formName];
      rule.re.lastIndex = 0;
      let hit: Finding | undefined;
      for (const m of src.matchAll(rule.re)) {
        if (rule.also && !rule.also(m, src)) continue;
        hit = { kind: rule.kind, label: rule.label, excerpt: m[0] };
        break;
      }
      if (hit) {
        into.push(hit);
        break;
      }
    }
  }
}

function findThreats(text: string): Finding[] {
  const chars = [...text];
  const badIdx = invisibleIndexes(chars);
  const findings: Finding[] = [];
  if (badIdx.length > 0) {
    const firstCp = chars[badIdx[0] ?? 0]?.codePointAt(0) ?? 0;
    const more = badIdx.length > 1 ? ` and ${badIdx.length - 1} more` : "";
    const shown = `${cpName(firstCp)}${more}`;
    findings.push({ kind: "invisible_unicode", label: `invisible or text-direction character ${cpName(firstCp)}`, excerpt: shown, shown });
  }
  const forms = buildForms(chars, new Set(badIdx));
  findings.push(...homoglyphFindings(forms.norm));
  runRules(ENGLISH_INJECTION, forms, findings);
  runRules(MULTILINGUAL_INJECTION, forms, findings);
  runRules(ROLE_RULES, forms, findings);
  runRules(HIDDEN_RULES, forms, findings);
  findings.push(...commandFindings(forms.deconf));
  runRules(EXFIL_RULES, forms, findings);
  findings.push(...sendFindings(forms.plain));
  // The compact-form rule exists for disguised phrasing; when the plain rule already fired it adds nothing.
  const plainHit = findings.some((f) => f.kind === "prompt_injection" && !f.label.endsWith(DISGUISED));
  return dedupe(findings.filter((f) => !(plainHit && f.label.endsWith(DISGUISED))));
}

const DISGUISED = "(spaced or disguised)";

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.kind}\u0000${f.label}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

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
    advice: "Memory holds facts, not instructions; nothing was saved.",
    short: "prompt injection",
  },
  role_impersonation: {
    what: "imitates a system or chat-role message",
    advice: "Memory holds facts, not conversation turns; nothing was saved.",
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
  exfiltration: {
    what: "looks like an attempt to send secrets or private data somewhere",
    advice: "Memory must not carry commands or requests that move data out; nothing was saved.",
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
 * The version of these rules: a hash of this module's own text, so any change to a rule (or to
 * anything else here) makes every stored verdict stale at once, with nothing to remember to bump.
 * Text written through the stores passed the rules of this version when it was written
 * (`scannedWith`), and prompts need not check it again until the rules change.
 */
export const RULES_VERSION = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url))).digest("hex").slice(0, 16);

/**
 * Verdicts on stored text are remembered by text. Every new session's prompt re-checks the place's
 * memory entries and skill descriptions, the same texts session after session: scanning them was
 * most of a new session's cost (about 7 ms with a couple of hundred entries). The rules are fixed
 * for the life of the process, so a verdict never goes stale; the oldest are dropped past the bound.
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
