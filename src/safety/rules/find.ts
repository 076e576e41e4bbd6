/**
 * Every rule, run in order over one text: the order is the order of the findings, and the first
 * finding is the one a blocked write's message leads with.
 */
import { commandFindings } from "./commands.ts";
import { encodedFindings } from "./encoded.ts";
import { ENGLISH_INJECTION } from "./english.ts";
import { EXFIL_RULES, sendFindings } from "./exfiltration.ts";
import type { Finding } from "./finding.ts";
import { HIDDEN_RULES } from "./hidden.ts";
import { homoglyphFindings } from "./homoglyphs.ts";
import { invisibleFindings, invisibleIndexes } from "./invisible.ts";
import { MULTILINGUAL_INJECTION } from "./multilingual.ts";
import { buildForms } from "./normalise.ts";
import { runRules } from "./pattern.ts";
import { ROLE_RULES } from "./roles.ts";
import { TAMPERING_RULES } from "./tampering.ts";

/** What is wrong with `text`, one finding per rule that fired; none when it may be stored. */
export function findThreats(text: string): Finding[] {
  const findings = findInClear(text);
  // Base64 that decodes to prose is read too, one level deep (encoded.ts).
  findings.push(...encodedFindings(text, findInClear));
  return dedupe(findings);
}

function findInClear(text: string): Finding[] {
  const chars = [...text];
  const badIdx = invisibleIndexes(chars);
  const findings: Finding[] = invisibleFindings(chars, badIdx);
  const forms = buildForms(chars, new Set(badIdx));
  findings.push(...homoglyphFindings(forms.norm));
  runRules(ENGLISH_INJECTION, forms, findings);
  runRules(MULTILINGUAL_INJECTION, forms, findings);
  runRules(ROLE_RULES, forms, findings);
  runRules(HIDDEN_RULES, forms, findings);
  findings.push(...commandFindings(forms.deconf));
  runRules(EXFIL_RULES, forms, findings);
  runRules(TAMPERING_RULES, forms, findings);
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
