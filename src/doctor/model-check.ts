/**
 * The model endpoint: one tiny request (max_tokens 1) per configured model, to ANTHROPIC_BASE_URL
 * when set, with the key cairn will use. Proves the endpoint is reachable, the key accepted and
 * each model served; costs a few input tokens.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { Config } from "../app/config.ts";
import { errorPhrase, fail, pass, seconds, type CheckLine } from "./check.ts";

const ANTHROPIC_API = "https://api.anthropic.com";

/** The distinct models cairn calls, each with the variables that name it. */
export function configuredModels(cfg: Config): { model: string; vars: string[] }[] {
  const named: [string, string][] = [
    ["CAIRN_MODEL", cfg.CAIRN_MODEL],
    ["CAIRN_SUMMARY_MODEL", cfg.CAIRN_SUMMARY_MODEL],
    ...(cfg.CAIRN_REVIEW_MODEL ? [["CAIRN_REVIEW_MODEL", cfg.CAIRN_REVIEW_MODEL] as [string, string]] : []),
  ];
  const byModel = new Map<string, string[]>();
  for (const [name, model] of named) byModel.set(model, [...(byModel.get(model) ?? []), name]);
  return [...byModel].map(([model, vars]) => ({ model, vars }));
}

const REACH_FIX = "check ANTHROPIC_BASE_URL, and that this machine can reach it (proxy, firewall)";

function modelLine(model: string, vars: string[], endpoint: string, timeoutMs: number, err: unknown): CheckLine {
  const label = `model ${model}`;
  const which = vars.join(", ");
  if (err instanceof APIConnectionTimeoutError || err instanceof APIUserAbortError) return fail(label, `no answer from ${endpoint} within ${seconds(timeoutMs)}`, REACH_FIX);
  if (err instanceof APIConnectionError) return fail(label, `could not reach ${endpoint}: ${errorPhrase(err.cause ?? err)}`, REACH_FIX);
  if (err instanceof APIError) {
    const said = `${err.status ?? "no status"}${err.type ? ` ${err.type}` : ""}`;
    switch (err.status) {
      case 401:
        return fail(label, `${endpoint} refused ANTHROPIC_API_KEY (${said})`, "set ANTHROPIC_API_KEY to a valid key (console.anthropic.com, API keys), one for the endpoint in ANTHROPIC_BASE_URL");
      case 403:
        return fail(label, `ANTHROPIC_API_KEY may not use ${model} (${said})`, `set ${which} to a model your key may use, or ask your organisation's admin for access`);
      case 404:
        return fail(label, `${endpoint} does not serve ${model} (${said})`, `set ${which} to a model the endpoint serves; check that ANTHROPIC_BASE_URL has no /v1 at its end`);
      case 429:
      case 529:
        // The key and the model were accepted before the endpoint said "later": nothing to fix here.
        return pass(label, `the key is accepted; ${endpoint} is busy right now (${said}), and cairn retries after its retry-after`);
      default:
        return fail(label, `${endpoint} answered ${said}: ${err.message}`, err.status !== undefined && err.status >= 500 ? "try again later; if it lasts, check the endpoint's status page" : `check ${which} and ANTHROPIC_BASE_URL`);
    }
  }
  return fail(label, `the request failed: ${errorPhrase(err)}`, REACH_FIX);
}

export async function checkModel(cfg: Config, timeoutMs: number, signal: AbortSignal): Promise<CheckLine[]> {
  if (!cfg.ANTHROPIC_API_KEY) {
    return [fail("model", "ANTHROPIC_API_KEY is not set: cairn cannot answer", "set it to a Claude API key in the environment or .env (ANTHROPIC_BASE_URL may name any Anthropic-compatible endpoint)")];
  }
  const endpoint = cfg.ANTHROPIC_BASE_URL ?? ANTHROPIC_API;
  // No retries: the doctor reports what one request meets.
  const sdk = new Anthropic({ apiKey: cfg.ANTHROPIC_API_KEY, baseURL: endpoint, maxRetries: 0, timeout: timeoutMs });
  return Promise.all(
    configuredModels(cfg).map(async ({ model, vars }) => {
      const started = Date.now();
      try {
        await sdk.messages.create({ model, max_tokens: 1, messages: [{ role: "user", content: "ping" }] }, { signal });
        return pass(`model ${model}`, `answered at ${endpoint} (${seconds(Date.now() - started)}; ${vars.join(", ")})`);
      } catch (err) {
        return modelLine(model, vars, endpoint, timeoutMs, err);
      }
    }),
  );
}
