/**
 * A line diff of two texts of a skill, for people to judge a proposed change at a glance: removed
 * lines `- `, added `+ `, a little unchanged context around them, long unchanged runs elided. Not a
 * patch format: nothing applies it (a proposal keeps both whole texts).
 */

/** Unchanged lines shown on each side of a change. */
const CONTEXT = 2;
/** Above this many cells the middle is shown as all removed, then all added, instead of aligned. */
const MAX_CELLS = 250_000;

/** `~`: unchanged lines left out. */
type Op = { kind: " " | "-" | "+" | "~"; line: string };

/** The diff's lines (at most `maxLines`, the rest counted); a text that did not exist diffs as all added. */
export function lineDiff(oldText: string | null, newText: string, maxLines = 40): string[] {
  const ops = elide(diffOps(oldText === null ? [] : oldText.split("\n"), newText.split("\n")));
  const lines = ops.map((o) => (o.kind === "~" ? "  …" : `${o.kind} ${o.line}`));
  return lines.length <= maxLines ? lines : [...lines.slice(0, maxLines), `  … (${lines.length - maxLines} more lines)`];
}

/** Lines added and removed. */
export function diffCounts(oldText: string | null, newText: string): { added: number; removed: number } {
  const ops = diffOps(oldText === null ? [] : oldText.split("\n"), newText.split("\n"));
  return { added: ops.filter((o) => o.kind === "+").length, removed: ops.filter((o) => o.kind === "-").length };
}

function diffOps(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const same = (lines: readonly string[]): Op[] => lines.map((line) => ({ kind: " ", line }));
  const middle = aligned(a.slice(start, a.length - end), b.slice(start, b.length - end));
  return [...same(a.slice(0, start)), ...middle, ...same(a.slice(a.length - end))];
}

/** The middle aligned by a longest common subsequence of lines. */
function aligned(a: readonly string[], b: readonly string[]): Op[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((line): Op => ({ kind: "-", line })), ...b.map((line): Op => ({ kind: "+", line }))];
  // lcs[i][j]: the common lines of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ kind: "-", line: a[i++]! });
    else ops.push({ kind: "+", line: b[j++]! });
  }
  return ops;
}

/** Each run of unchanged lines further than CONTEXT from any change becomes one "…". */
function elide(ops: readonly Op[]): Op[] {
  const near = ops.map(() => false);
  ops.forEach((o, i) => {
    if (o.kind === " ") return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(ops.length - 1, i + CONTEXT); k++) near[k] = true;
  });
  const out: Op[] = [];
  ops.forEach((o, i) => {
    if (near[i]) out.push(o);
    else if (out.at(-1)?.kind !== "~") out.push({ kind: "~", line: "" });
  });
  return out;
}
