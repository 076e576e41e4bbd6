#!/usr/bin/env node
/**
 * The `cairn` command: `cairn` or `cairn start` runs the bot (src/main.ts), `cairn doctor` checks
 * its settings, database, model endpoint and platforms and exits 0 only when all is well.
 * The bot's modules are loaded only to start it: the doctor stays quick and loads no platform SDK.
 */
import dotenv from "dotenv";

const USAGE = `usage: cairn [start]              start cairn (settings from the environment and .env)
       cairn doctor [--timeout MS]  check the settings, database, model endpoint, Slack and Discord
       cairn help                   this text`;

/** `--timeout 5000` or `--timeout=5000`; null when the arguments are not understood. */
function doctorTimeout(args: readonly string[], fallback: number): number | null {
  let timeout = fallback;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = arg.startsWith("--timeout=") ? arg.slice("--timeout=".length) : arg === "--timeout" ? args[++i] : null;
    if (value === null || value === undefined || !/^\d+$/.test(value) || Number(value) < 1) return null;
    timeout = Number(value);
  }
  return timeout;
}

async function run(args: readonly string[]): Promise<number | "started"> {
  const [command = "start", ...rest] = args;
  switch (command) {
    case "start":
      if (rest.length) break;
      // main.ts starts cairn when loaded and exits the process itself.
      await import("./main.ts");
      return "started";
    case "doctor": {
      const { DEFAULT_TIMEOUT_MS, runDoctor } = await import("./doctor/doctor.ts");
      const timeoutMs = doctorTimeout(rest, DEFAULT_TIMEOUT_MS);
      if (timeoutMs === null) break;
      dotenv.config({ quiet: true });
      const ok = await runDoctor(process.env, (line) => process.stdout.write(`${line}\n`), timeoutMs);
      return ok ? 0 : 1;
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

const outcome = await run(process.argv.slice(2));
// The doctor's idle keep-alive connections would hold the process open for seconds.
if (outcome !== "started") process.exit(outcome);
