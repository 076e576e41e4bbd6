/**
 * What the person is told in the conversation after a review: nothing when it changed nothing, a
 * line or two (brief), or the list of what it wrote (verbose). Pending entries come with how to
 * confirm them; a team skill change the review was refused is reported as a suggestion.
 */
import type { ToolWrite } from "../tools/registry.ts";
import type { ReviewNotice } from "./settings.ts";

type MemoryWrite = Extract<ToolWrite, { kind: "memory" }>;
type SkillWrite = Extract<ToolWrite, { kind: "skill" }>;

export interface ReviewReport {
  writes: readonly ToolWrite[];
  /** Team skill changes the review tried and was refused (src/learning/review-tools.ts). */
  proposals: readonly { name: string; action: string }[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const list = (items: readonly string[]) => (items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/** The ids of the entries that wait for the person's confirmation. */
export function pendingIds(report: ReviewReport): string[] {
  return report.writes.flatMap((w) => (w.kind === "memory" && w.pendingId ? [w.pendingId] : []));
}

/** The notice to post, or null when there is nothing to tell (or notices are off). */
export function reviewNotice(mode: ReviewNotice, report: ReviewReport, name: string): string | null {
  if (mode === "off" || (report.writes.length === 0 && report.proposals.length === 0)) return null;
  const memory = report.writes.filter((w): w is MemoryWrite => w.kind === "memory");
  // A skill write the safety screen held is a proposal, not a change (tools/skill-reach.ts).
  const all = report.writes.filter((w): w is SkillWrite => w.kind === "skill");
  const skills = all.filter((w) => !w.proposalId);
  const lines = mode === "brief" ? briefLines(memory.filter((w) => !w.pendingId), skills) : verboseLines(memory, skills);
  const suggested = [...new Set(report.proposals.map((p) => `\`${p.name}\``))];
  if (suggested.length) {
    lines.push(`Suggested a change to team skill ${list(suggested)}: not applied, since team skills change only when someone asks me to.`);
  }
  const held = [...new Set(all.filter((w) => w.proposalId).map((w) => `\`${w.name}\``))];
  if (held.length) lines.push(`Held for a teammate's approval by the safety screen: a change to skill ${list(held)} (see \`team\`).`);
  const waiting = confirmLine(memory.filter((w) => w.pendingId), name);
  if (waiting) lines.push(waiting);
  return lines.join("\n");
}

function briefLines(saved: readonly MemoryWrite[], skills: readonly SkillWrite[]): string[] {
  const lines: string[] = [];
  const count = (pred: (w: MemoryWrite) => boolean) => saved.filter(pred).length;
  const parts = [
    [count((w) => w.action === "add" && w.entryKind !== "lesson"), "fact"],
    [count((w) => w.action === "add" && w.entryKind === "lesson"), "lesson"],
    [count((w) => w.action === "replace"), "update"],
    [count((w) => w.action === "remove"), "removal"],
  ] as const;
  const memory = parts.filter(([n]) => n > 0).map(([n, what]) => plural(n, what));
  if (memory.length) lines.push(`Saved to memory: ${memory.join(", ")}.`);
  const verb = (a: string) => (a === "create" ? "Created" : a === "archive" ? "Archived" : "Updated");
  for (const v of ["Created", "Updated", "Archived"]) {
    const names = [...new Set(skills.filter((s) => verb(s.action) === v).map((s) => s.name))];
    if (names.length) lines.push(`${v} ${names.length === 1 ? "skill" : "skills"} ${list(names)}.`);
  }
  return lines;
}

function verboseLines(memory: readonly MemoryWrite[], skills: readonly SkillWrite[]): string[] {
  const lines = memory.map((w) => {
    const where = `${w.target} ${w.entryKind === "lesson" ? "lesson" : "memory"}${w.pendingId ? `, waiting for your ✅ (id ${w.pendingId})` : ""}`;
    const what = w.action === "add" ? `added "${w.text}"` : w.action === "replace" ? `changed to "${w.text}"` : w.pendingId ? "removal of an entry" : `removed "${w.text}"`;
    return `- ${where}: ${what}`;
  });
  lines.push(...skills.map((s) => `- skill \`${s.name}\`: ${s.action.replace("_", " ")}`));
  return lines.length ? ["After reviewing this conversation I saved:", ...lines] : [];
}

/** "fact" or "lesson" when all are one kind, else "entry". */
function entryWord(writes: readonly MemoryWrite[]): string {
  const kinds = new Set(writes.map((w) => (w.entryKind === "lesson" ? "lesson" : "fact")));
  return kinds.size === 1 ? [...kinds][0]! : "entry";
}

function confirmLine(pending: readonly MemoryWrite[], name: string): string | null {
  if (pending.length === 0) return null;
  const teamAdds = pending.filter((w) => w.action === "add");
  const parts = [
    teamAdds.length ? plural(teamAdds.length, `team ${entryWord(teamAdds)}`, `team ${entryWord(teamAdds).replace(/y$/, "ie")}s`) : null,
    pending.some((w) => w.action === "replace") ? plural(pending.filter((w) => w.action === "replace").length, "change to an entry", "changes to entries") : null,
    pending.some((w) => w.action === "remove") ? plural(pending.filter((w) => w.action === "remove").length, "removal") : null,
  ].filter((p): p is string => p !== null);
  const ids = pending.map((w) => w.pendingId).join(" ");
  return `**${name}**, ${list(parts)} ${pending.length === 1 ? "is" : "are"} waiting for your ✅ on this message (or \`/cairn confirm ${ids}\`).`;
}
