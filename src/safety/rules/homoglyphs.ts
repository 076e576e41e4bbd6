/**
 * Look-alike letters: Cyrillic and Greek letters standing in for Latin ones, the way a word is
 * disguised so that it reads the same but matches no rule. The same table folds them back to Latin
 * in the normalised forms (normalise.ts).
 */
import type { Finding } from "./finding.ts";

/**
 * Cyrillic and Greek letters that render like Latin ones. Small on purpose: these are the letters
 * attackers actually use, and folding more would turn ordinary Russian or Greek into false Latin.
 */
export const CONFUSABLES: Record<string, string> = {
  а: "a", е: "e", о: "o", р: "p", с: "c", х: "x", у: "y", і: "i", ѕ: "s", ј: "j", һ: "h", ԁ: "d", ӏ: "l", ԛ: "q", ԝ: "w", ё: "e", ї: "i",
  А: "A", В: "B", Е: "E", К: "K", М: "M", Н: "H", О: "O", Р: "P", С: "C", Т: "T", Х: "X", У: "Y", І: "I", Ј: "J", Ѕ: "S",
  ο: "o", α: "a", ε: "e", ι: "i", ν: "v", κ: "k", ρ: "p", υ: "u", χ: "x",
  Α: "A", Β: "B", Ε: "E", Ζ: "Z", Η: "H", Ι: "I", Κ: "K", Μ: "M", Ν: "N", Ο: "O", Ρ: "P", Τ: "T", Υ: "Y", Χ: "X",
};

const LATIN = /\p{Script=Latin}/u;
const CYR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/** Words mixing Latin with look-alikes (the first three), or else one word spelled wholly in them. */
export function homoglyphFindings(norm: string): Finding[] {
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
