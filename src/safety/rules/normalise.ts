/**
 * The normalised copies of a text that the rules match on, so that fullwidth, look-alike, spaced-out,
 * emphasised or leetspeak spellings of a phrase meet the same rule. Redaction and what is stored
 * use the original text; these forms are only ever matched.
 */
import { CONFUSABLES } from "./homoglyphs.ts";

const QUOTES: Record<string, string> = { "‘": "'", "’": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"' };

/** Digits and symbols used as letters; folded only in the `compact` form, where they cannot break code. */
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };

export interface Forms {
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

export function buildForms(chars: readonly string[], bad: ReadonlySet<number>): Forms {
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
