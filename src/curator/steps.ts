/**
 * The loss check of a skill merge (after openclaw's dreaming, which refuses a rewrite that loses
 * more than a quarter of what it replaces): the umbrella must keep at least three quarters of the
 * merged skills' steps. A step is a numbered or bulleted line of the body; the same step in two
 * merged skills (same words, whatever the numbering or case) counts once, so an umbrella may drop
 * the duplicates a merge exists to remove.
 */
import { parseSkillMd } from "../skills/skillmd.ts";

const STEP = /^\s*(?:\d+[.)]|[-*+])\s+(\S.*)$/;

/** At most this share of the merged skills' steps may be missing from the umbrella. */
export const MAX_STEP_LOSS = 0.25;

function body(content: string): string {
  const parsed = parseSkillMd(content);
  return parsed.ok ? parsed.skill.body : content;
}

/** The distinct steps of a SKILL.md's body, normalized (case, spacing, trailing punctuation). */
export function stepsOf(content: string): Set<string> {
  const steps = new Set<string>();
  for (const line of body(content).split("\n")) {
    const m = STEP.exec(line);
    if (m) steps.add(m[1]!.toLowerCase().replace(/\s+/g, " ").replace(/[.;:!]+$/, "").trim());
  }
  return steps;
}

export interface StepCheck {
  ok: boolean;
  /** Distinct steps of the merged skills. */
  before: number;
  /** Steps of the umbrella. */
  after: number;
}

export function checkSteps(merged: readonly string[], umbrella: string): StepCheck {
  const union = new Set<string>();
  for (const content of merged) for (const s of stepsOf(content)) union.add(s);
  const after = stepsOf(umbrella).size;
  const before = union.size;
  return { ok: before - after <= before * MAX_STEP_LOSS, before, after };
}
