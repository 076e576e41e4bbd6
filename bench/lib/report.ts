/** Figures and output shared by the benchmarks: percentiles, a plain-text table, the JSON file. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/ground/paths.ts";

export const RESULTS_DIR = join(PROJECT_ROOT, "bench", "results");

/** The p-th percentile (0-100) by nearest rank; NaN for no samples. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function round(v: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** A left-aligned first column and right-aligned figures. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === "number" ? fmt(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? "").length)));
  const line = (r: (string | number)[]) =>
    r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join("  ");
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

export function writeResult(name: string, result: object): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** High-resolution milliseconds. */
export function now(): number {
  return performance.now();
}

/** The checked-out commit, read from .git without running git (for the record in each result). */
export function currentCommit(): string | null {
  try {
    const git = `${join(PROJECT_ROOT, ".git")}/`;
    const head = readFileSync(`${git}HEAD`, "utf8").trim();
    if (!head.startsWith("ref: ")) return head;
    const ref = head.slice(5);
    try {
      return readFileSync(`${git}${ref}`, "utf8").trim();
    } catch {
      const packed = readFileSync(`${git}packed-refs`, "utf8").split("\n").find((l) => l.endsWith(` ${ref}`));
      return packed?.split(" ")[0] ?? null;
    }
  } catch {
    return null;
  }
}
