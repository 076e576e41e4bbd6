/**
 * Where cairn's own files are (migrations, bundled skills): the folder holding its package.json,
 * found by walking up from this module. The same answer whether cairn runs from its TypeScript
 * sources (src/) or from the compiled build (dist/src/), so neither needs paths of its own.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * `mkdir -p` that fails at once. Node's own recursive mkdir (sync and async) loops forever at full
 * CPU on a folder that can never exist: under /proc mkdir says ENOENT, which it takes for "make the
 * parent first", and the loop never yields to a SIGTERM. This makes each missing folder below the
 * nearest existing one and throws the first refusal (ENOENT, EACCES, ENOTDIR ...) as it is.
 */
export function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (err) {
      // Another process (a replica starting beside this one) made it first.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
