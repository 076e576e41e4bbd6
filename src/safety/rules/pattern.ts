/**
 * Pattern rules: a regular expression matched on some of the normalised forms, with an optional
 * second condition, and the building blocks the rule tables share.
 */
import type { Finding, ThreatKind } from "./finding.ts";
import type { Forms } from "./normalise.ts";

/** Word boundaries that also work for non-ASCII letters (`\b` is ASCII-only in JS). */
export const B = String.raw`(?<![\p{L}\p{N}_])`;
export const E = String.raw`(?![\p{L}\p{N}_])`;
/** Negations that turn an injection phrase into advice ("don't forget the previous instructions"). */
export const NOT = String.raw`(?<!(?:don't|dont|do\s+not|never|not|didn't|won't|shouldn't|cannot|can't)\s+)`;

export const rx = (source: string, flags = "giu"): RegExp => new RegExp(source, flags);

export interface PatternRule {
  kind: ThreatKind;
  label: string;
  forms: ReadonlyArray<keyof Forms>;
  re: RegExp;
  /** Extra condition on the match (e.g. a second clue nearby); the rule fires only when it holds. */
  also?: (m: RegExpExecArray, src: string) => boolean;
}

/** `re.test(s)` from the start of `s`, with a global expression's `lastIndex` reset before and after. */
export function testNoState(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  const hit = re.test(s);
  re.lastIndex = 0;
  return hit;
}

/** Runs each rule over its forms in order; a rule reports its first hit, in the first form that has one. */
export function runRules(rules: readonly PatternRule[], forms: Forms, into: Finding[]): void {
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
