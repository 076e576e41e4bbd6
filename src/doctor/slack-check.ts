/**
 * Slack, when SLACK_BOT_TOKEN is set: `auth.test` with the bot token (who it is, and from Slack's
 * `x-oauth-scopes` header, which scopes it holds, compared with what slack/manifest.yml asks for),
 * and for Socket Mode `apps.connections.open` with the app token. Plain fetch, no Bolt.
 */
import { z } from "zod";
import type { Config } from "../app/config.ts";
import { BOT_SCOPES } from "../platforms/slack/scopes.ts";
import { DEFAULT_SLACK_API_URL } from "../platforms/slack/settings.ts";
import { errorPhrase, fail, pass, type CheckLine } from "./check.ts";

const AnswerSchema = z.looseObject({
  ok: z.boolean(),
  error: z.string().optional(),
  user: z.string().optional(),
  user_id: z.string().optional(),
  bot_id: z.string().optional(),
  team: z.string().optional(),
  team_id: z.string().optional(),
});
type Answer = z.infer<typeof AnswerSchema>;

type Called = { kind: "answer"; answer: Answer; scopes: string | null } | { kind: "problem"; detail: string; fix: string };

/** Errors that mean the token itself is not good (wrong, revoked, expired, of a removed app). */
const REFUSED = new Set(["invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "no_permission", "org_login_required", "ekm_access_denied"]);

async function call(apiUrl: string, method: string, token: string, signal: AbortSignal): Promise<Called> {
  const base = apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`;
  let res: Response;
  try {
    res = await fetch(new URL(method, base), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: "",
      signal,
    });
  } catch (err) {
    return { kind: "problem", detail: `could not reach Slack at ${base}: ${errorPhrase(err)}`, fix: "check that this machine can reach slack.com (proxy, firewall), or SLACK_API_URL" };
  }
  if (res.status === 429) return { kind: "problem", detail: `Slack rate limited ${method} (429)`, fix: "run the doctor again in a minute" };
  const parsed = AnswerSchema.safeParse(await res.json().catch(() => null));
  if (!res.ok || !parsed.success) return { kind: "problem", detail: `Slack answered ${method} with HTTP ${res.status} and no Web API answer`, fix: "check SLACK_API_URL (default https://slack.com/api/)" };
  return { kind: "answer", answer: parsed.data, scopes: res.headers.get("x-oauth-scopes") };
}

function scopesLine(header: string | null): CheckLine {
  const label = "Slack scopes";
  if (header === null) return fail(label, "Slack did not say which scopes the bot token has (no x-oauth-scopes header)", "compare the token's scopes on the app's OAuth & Permissions page with slack/manifest.yml by hand");
  const granted = new Set(header.split(",").map((s) => s.trim()).filter(Boolean));
  const needed = Object.keys(BOT_SCOPES) as (keyof typeof BOT_SCOPES)[];
  const missing = needed.filter((scope) => !granted.has(scope));
  if (missing.length === 0) return pass(label, `all ${needed.length} scopes slack/manifest.yml asks for are granted`);
  return fail(
    label,
    `the bot token lacks ${missing.length} of the scopes slack/manifest.yml asks for: ${missing.map((s) => `${s} (${BOT_SCOPES[s]})`).join("; ")}`,
    "add them under OAuth & Permissions, Bot Token Scopes (or paste slack/manifest.yml into the app's App Manifest), then reinstall the app to the workspace so the token gets them",
  );
}

async function botLines(apiUrl: string, token: string, signal: AbortSignal): Promise<CheckLine[]> {
  const label = "Slack bot token";
  const called = await call(apiUrl, "auth.test", token, signal);
  if (called.kind === "problem") return [fail(label, called.detail, called.fix)];
  const { answer } = called;
  if (!answer.ok) {
    const error = answer.error ?? "unknown_error";
    if (REFUSED.has(error)) return [fail(label, `Slack refused SLACK_BOT_TOKEN (${error})`, "copy the Bot User OAuth Token (xoxb-...) from the app's OAuth & Permissions page; install the app to the workspace first")];
    return [fail(label, `auth.test failed: ${error}`, "check SLACK_BOT_TOKEN")];
  }
  if (!answer.bot_id) return [fail(label, "SLACK_BOT_TOKEN is not a bot token (auth.test names no bot)", "use the Bot User OAuth Token (xoxb-...), not a user token (xoxp-...)")];
  return [pass(label, `${answer.user ?? answer.user_id ?? "the bot"} in ${answer.team ?? "the workspace"} (${answer.team_id ?? "?"})`), scopesLine(called.scopes)];
}

async function appLine(apiUrl: string, token: string, signal: AbortSignal): Promise<CheckLine> {
  const label = "Slack app token";
  const fix = "create an app-level token with the connections:write scope (Basic Information, App-Level Tokens: xapp-...) and set SLACK_APP_TOKEN to it; Socket Mode must be on (Settings, Socket Mode)";
  const called = await call(apiUrl, "apps.connections.open", token, signal);
  if (called.kind === "problem") return fail(label, called.detail, called.fix);
  const { answer } = called;
  if (answer.ok) return pass(label, "Socket Mode: SLACK_APP_TOKEN accepted (apps.connections.open)");
  const error = answer.error ?? "unknown_error";
  if (error === "not_allowed_token_type") return fail(label, "SLACK_APP_TOKEN is not an app-level token (not_allowed_token_type)", fix);
  if (error === "missing_scope") return fail(label, "SLACK_APP_TOKEN lacks connections:write (missing_scope)", fix);
  if (REFUSED.has(error)) return fail(label, `Slack refused SLACK_APP_TOKEN (${error})`, fix);
  return fail(label, `apps.connections.open failed: ${error}`, fix);
}

export async function checkSlack(cfg: Config, signal: AbortSignal): Promise<CheckLine[]> {
  if (!cfg.SLACK_BOT_TOKEN) return [];
  const apiUrl = cfg.SLACK_API_URL ?? DEFAULT_SLACK_API_URL;
  const [bot, app] = await Promise.all([botLines(apiUrl, cfg.SLACK_BOT_TOKEN, signal), cfg.SLACK_APP_TOKEN ? appLine(apiUrl, cfg.SLACK_APP_TOKEN, signal) : null]);
  return app ? [...bot, app] : bot;
}
