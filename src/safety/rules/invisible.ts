/**
 * Invisible and bidirectional characters: which code points in a text are hostile (they hide or
 * reorder content), and which uses of the same characters are ordinary writing and spared.
 */
import type { Finding } from "./finding.ts";

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
export function invisibleIndexes(chars: readonly string[]): number[] {
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

/** One finding for the hostile characters at `bad` (indexes into `chars`), naming the first. */
export function invisibleFindings(chars: readonly string[], bad: readonly number[]): Finding[] {
  if (bad.length === 0) return [];
  const firstCp = chars[bad[0] ?? 0]?.codePointAt(0) ?? 0;
  const more = bad.length > 1 ? ` and ${bad.length - 1} more` : "";
  const shown = `${cpName(firstCp)}${more}`;
  return [{ kind: "invisible_unicode", label: `invisible or text-direction character ${cpName(firstCp)}`, excerpt: shown, shown }];
}
