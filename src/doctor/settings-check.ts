/** The settings line(s): every invalid variable and every disagreement, or what is configured. */
import { configSchema, type ConfigCheck } from "../app/config.ts";
import { providerOf } from "../db/client.ts";
import { fail, pass, type CheckLine } from "./check.ts";

const LABEL = "settings";

/** The variables of the schema given a value (empty ones are unset). */
function setVariables(env: Record<string, string | undefined>): string[] {
  return Object.keys(configSchema.shape).filter((key) => (env[key] ?? "").trim() !== "");
}

function platforms(check: ConfigCheck): string {
  const cfg = check.config;
  if (!cfg) return "";
  const on = [
    ...(cfg.SLACK_BOT_TOKEN ? [`Slack (${cfg.SLACK_APP_TOKEN ? "Socket Mode" : `HTTP mode on port ${cfg.PORT}`})`] : []),
    ...(cfg.DISCORD_TOKEN ? ["Discord"] : []),
  ];
  return on.length ? on.join(" and ") : "no platform: cairn starts a console chat";
}

export function settingsLines(check: ConfigCheck, env: Record<string, string | undefined>): CheckLine[] {
  if (check.problems.length === 0 && check.config) {
    const database = providerOf(check.config.DATABASE_URL) === "sqlite" ? "SQLite" : "PostgreSQL";
    const set = setVariables(env).length;
    return [pass(LABEL, `${set ? `${set} set` : "none set (defaults)"}, all valid; ${database}; ${platforms(check)}`)];
  }
  return check.problems.map((problem) => {
    // "NAME: expected ..." or, for a number, "NAME must be ...".
    const name = /^([A-Z0-9_]+)(?::| must be) /.exec(problem)?.[1];
    // An invalid value says what was expected; a disagreement between settings says what to set.
    return name && check.invalid.has(name)
      ? fail(LABEL, problem, `give ${name} a valid value in the environment or .env, or unset it for its default (.env.example documents each setting)`)
      : fail(LABEL, problem);
  });
}
