#!/usr/bin/env node
/**
 * The house's rules, checked (npm run check): dependency-cruiser's per-module rules
 * (.dependency-cruiser.cjs) and, beyond what it can say per module, no cycle between folders with
 * type imports counted. Arrows still to be fixed are listed in house-known.json: a new violation
 * fails, and so does a listed one that is gone (take it off the list, so the list only shrinks).
 *
 *   node scripts/check-house.mjs [--root DIR] [--known FILE] [--write-known]
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const root = resolve(opt("--root") ?? repo);
const knownFile = opt("--known") ?? (opt("--root") ? null : join(repo, "house-known.json"));

/** The folder a module belongs to: src/<folder>, src/platforms/<platform>, or the top's own files. */
function folderOf(path) {
  const parts = path.replace(/^src\//, "").split("/");
  if (parts.length === 1) return "(top)";
  return parts[0] === "platforms" ? `platforms/${parts[1]}` : parts[0];
}

function cruise() {
  const bin = join(repo, "node_modules", ".bin", "depcruise");
  const out = execFileSync(bin, ["src", "--config", join(repo, ".dependency-cruiser.cjs"), "--output-type", "json"], { cwd: root, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(out);
}

/** Arrows between folders that lie on a cycle of folders (strongly connected components of more than one). */
function folderCycleArrows(modules) {
  const graph = new Map();
  for (const m of modules) {
    if (!m.source.startsWith("src/")) continue;
    for (const d of m.dependencies) {
      if (!d.resolved.startsWith("src/")) continue;
      const a = folderOf(m.source), b = folderOf(d.resolved);
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Set());
      if (!graph.has(b)) graph.set(b, new Set());
      graph.get(a).add(b);
    }
  }
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map(), low = new Map(), stack = [], onStack = new Set(), component = new Map();
  const visit = (v) => {
    index.set(v, next); low.set(v, next++); stack.push(v); onStack.add(v);
    for (const w of graph.get(v)) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      let w;
      do { w = stack.pop(); onStack.delete(w); component.set(w, v); } while (w !== v);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  const arrows = [];
  for (const [a, targets] of graph) for (const b of targets) if (component.get(a) === component.get(b)) arrows.push(`folder-cycle: ${a} -> ${b}`);
  return arrows.sort();
}

function findings(result) {
  const rules = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
  return [...new Set([...rules, ...folderCycleArrows(result.modules)])].sort();
}

const found = findings(cruise());
if (args.includes("--write-known")) {
  writeFileSync(knownFile, JSON.stringify({ comment: "Violations of the house's rules still to be fixed (scripts/check-house.mjs). The list may only shrink.", known: found }, null, 2) + "\n");
  console.log(`wrote ${found.length} known violations to ${knownFile}`);
  process.exit(0);
}
const known = knownFile && existsSync(knownFile) ? JSON.parse(readFileSync(knownFile, "utf8")).known : [];
const fresh = found.filter((f) => !known.includes(f));
const gone = known.filter((k) => !found.includes(k));
for (const f of fresh) console.log(`✗ ${f}`);
for (const g of gone) console.log(`✗ fixed, take it off ${knownFile}: ${g}`);
if (fresh.length || gone.length) {
  console.log(`house rules: ${fresh.length} new violation(s), ${gone.length} fixed but still listed`);
  process.exit(1);
}
console.log(`house rules hold (${known.length} known violation(s) listed in house-known.json)`);
