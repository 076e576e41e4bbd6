/**
 * The version of the rules: a hash of the text of every module in rules/ (the rule tables, the
 * normalisation they match on, the order they run in), so any change there makes every stored
 * verdict stale at once, with nothing to remember to bump. Text written through the stores passed
 * the rules of this version when it was written (`scannedWith`), and prompts need not check it
 * again until the rules change.
 *
 * The modules are read once, at load, from beside this one: the .ts sources under tsx and vitest,
 * the compiled .js under dist/. The two give different versions, so entries written by one are
 * re-checked once by the other; that costs a scan, never a missed check.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";

function hashRules(): string {
  const dir = new URL("./rules/", import.meta.url);
  const ext = extname(fileURLToPath(import.meta.url));
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(ext))
    .sort();
  if (files.length === 0) throw new Error(`no rule modules (*${ext}) in ${fileURLToPath(dir)}`);
  const hash = createHash("sha256");
  for (const name of files) hash.update(`${name}\0`).update(readFileSync(new URL(name, dir))).update("\0");
  return hash.digest("hex").slice(0, 16);
}

export const RULES_VERSION = hashRules();
