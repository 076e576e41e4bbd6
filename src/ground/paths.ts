/**
 * Where cairn's own files are (migrations, bundled skills): the folder holding its package.json,
 * found by walking up from this module. The same answer whether cairn runs from its TypeScript
 * sources (src/) or from the compiled build (dist/src/), so neither needs paths of its own.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
