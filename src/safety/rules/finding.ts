/**
 * What the rules report: the kinds of threat, and one rule hit with the evidence the verdict shows.
 */
export type ThreatKind =
  | "prompt_injection"
  | "exfiltration"
  | "invisible_unicode"
  | "homoglyph"
  | "hidden_comment"
  | "role_impersonation"
  | "self_tampering"
  | "persistence";

/** One rule hit. `label` is our wording (safe to show anywhere); `excerpt` is the offending text. */
export interface Finding {
  kind: ThreatKind;
  label: string;
  excerpt: string;
  /** Already-formatted evidence for the message, when quoting the excerpt would be wrong or unreadable. */
  shown?: string;
}
