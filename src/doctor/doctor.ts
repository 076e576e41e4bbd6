/**
 * `cairn doctor`: checks what cairn needs before it starts, and says for each problem what is
 * wrong and how to fix it. Every setting (all problems at once), the database and its migrations
 * (never applied here), the model endpoint, the embeddings endpoint, Slack and Discord when configured. Each network check
 * is time-boxed; they run side by side and print in a fixed order.
 */
import { checkConfig, type Config, type ConfigCheck } from "../app/config.ts";
import { fail, formatLine, seconds, timeBoxed, type CheckLine } from "./check.ts";
import { checkDatabase } from "./database-check.ts";
import { checkDiscord } from "./discord-check.ts";
import { checkModel } from "./model-check.ts";
import { checkEmbeddings } from "./embeddings-check.ts";
import { settingsLines } from "./settings-check.ts";
import { checkSlack } from "./slack-check.ts";

export const DEFAULT_TIMEOUT_MS = 10_000;
const BACKSTOP_MARGIN_MS = 2_000;

interface NetworkCheck {
  label: string;
  /** The settings it reads: with one of them invalid it is not run (the settings lines say why). */
  reads: readonly (keyof Config)[];
  /** Whether it applies at all (Slack only when SLACK_BOT_TOKEN is set, ...). */
  applies: (cfg: Config) => boolean;
  run: (cfg: Config, timeoutMs: number, signal: AbortSignal) => Promise<CheckLine[]>;
}

const CHECKS: readonly NetworkCheck[] = [
  { label: "database", reads: ["DATABASE_URL"], applies: () => true, run: (cfg, ms, signal) => checkDatabase(cfg.DATABASE_URL, ms, signal) },
  {
    label: "model",
    reads: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CAIRN_MODEL", "CAIRN_SUMMARY_MODEL", "CAIRN_REVIEW_MODEL"],
    applies: () => true,
    run: (cfg, ms, signal) => checkModel(cfg, ms, signal),
  },
  {
    label: "embeddings",
    reads: ["CAIRN_EMBEDDINGS_URL", "CAIRN_EMBEDDINGS_MODEL", "CAIRN_EMBEDDINGS_API_KEY", "CAIRN_EMBEDDINGS_DIMENSIONS"],
    applies: (cfg) => Boolean(cfg.CAIRN_EMBEDDINGS_URL && cfg.CAIRN_EMBEDDINGS_MODEL),
    run: (cfg, ms, signal) => checkEmbeddings(cfg, ms, signal),
  },
  { label: "Slack", reads: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_API_URL"], applies: (cfg) => Boolean(cfg.SLACK_BOT_TOKEN), run: (cfg, _ms, signal) => checkSlack(cfg, signal) },
  {
    label: "Discord",
    reads: ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID", "DISCORD_API_URL"],
    applies: (cfg) => Boolean(cfg.DISCORD_TOKEN),
    run: (cfg, _ms, signal) => checkDiscord(cfg, signal),
  },
];

function start(check: NetworkCheck, config: ConfigCheck, timeoutMs: number): Promise<CheckLine[]> | null {
  const cfg = config.config;
  if (!cfg) return null;
  const invalid = check.reads.filter((key) => config.invalid.has(key));
  if (invalid.length) return Promise.resolve([fail(check.label, `not checked while ${invalid.join(", ")} ${invalid.length === 1 ? "is" : "are"} invalid (see above)`)]);
  if (!check.applies(cfg)) return null;
  // The checks' own timeouts say more (which request, which server); the backstop waits a little longer.
  return timeBoxed(
    timeoutMs + BACKSTOP_MARGIN_MS,
    (signal) =>
      check.run(cfg, timeoutMs, signal).catch((err: unknown) => [fail(check.label, `the check failed: ${err instanceof Error ? err.message : String(err)}`)]),
    () => [fail(check.label, `no answer within ${seconds(timeoutMs + BACKSTOP_MARGIN_MS)}`, `check that the ${check.label} server is up and reachable from this machine`)],
  );
}

/**
 * Runs every check against `env`; `print` gets each line as soon as it and those before it are
 * known. Resolves to whether all is well.
 */
export async function runDoctor(env: Record<string, string | undefined>, print: (line: string) => void, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<boolean> {
  const config = checkConfig(env);
  const running = CHECKS.map((check) => start(check, config, timeoutMs));
  const lines: CheckLine[] = [];
  const show = (some: CheckLine[]): void => {
    for (const line of some) print(formatLine(line));
    lines.push(...some);
  };
  show(settingsLines(config, env));
  for (const pending of running) if (pending) show(await pending);
  const problems = lines.filter((l) => !l.ok).length;
  print(problems === 0 ? "All checks passed: cairn is ready to start." : `${problems} problem${problems === 1 ? "" : "s"} found: fix ${problems === 1 ? "it" : "them"}, then run the doctor again.`);
  return problems === 0;
}
