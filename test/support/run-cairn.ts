/**
 * cairn's real entry point in a child process, with only `env` (plus PATH and HOME), typing
 * `lines` one at a time as a person would: the next once `waitFor` says the previous answer
 * appeared. Used by the console and key-check tests.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../", import.meta.url));
export const tsx = join(root, "node_modules/.bin/tsx");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `src/main.ts` (or `command`) with only the given environment (plus PATH), feeding `lines`
 * one at a time.
 */
export function runCairn(env: Record<string, string>, lines: string[], waitFor?: (stdout: string, sent: number) => boolean, command: [string, string[]] = [tsx, ["src/main.ts"]]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command[1], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env } });
    let stdout = "";
    let stderr = "";
    let sent = 0;
    const pump = () => {
      // Send the next line once the previous answer has appeared, as a person typing would.
      while (sent < lines.length && (!waitFor || waitFor(stdout, sent))) child.stdin.write(`${lines[sent++]}\n`);
      if (sent === lines.length) child.stdin.end();
    };
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      pump();
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => {});
    pump();
  });
}

