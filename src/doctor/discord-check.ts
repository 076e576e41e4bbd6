/**
 * Discord, when DISCORD_TOKEN is set: the bot logs in over REST (`GET /users/@me`), and its
 * application (`GET /applications/@me`) is the one DISCORD_APPLICATION_ID names and has the
 * Message Content intent switched on (flags GATEWAY_MESSAGE_CONTENT or its _LIMITED form, for bots
 * in fewer than 100 servers). Without the intent the gateway refuses cairn's IDENTIFY.
 */
import { z } from "zod";
import type { Config } from "../app/config.ts";
import { errorPhrase, fail, pass, type CheckLine } from "./check.ts";

const DISCORD_API = "https://discord.com/api";
const GATEWAY_MESSAGE_CONTENT = 1 << 18;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;

const UserSchema = z.looseObject({ id: z.string(), username: z.string(), bot: z.boolean().optional() });
const ApplicationSchema = z.looseObject({ id: z.string(), name: z.string(), flags: z.number().int().optional() });

const PORTAL = "discord.com/developers/applications";

type Got<T> = { ok: true; value: T } | { ok: false; line: CheckLine };

async function get<T>(base: string, path: string, token: string, schema: z.ZodType<T>, label: string, signal: AbortSignal): Promise<Got<T>> {
  let res: Response;
  try {
    res = await fetch(`${base}/v10${path}`, { headers: { authorization: `Bot ${token}` }, signal });
  } catch (err) {
    return { ok: false, line: fail(label, `could not reach Discord at ${base}: ${errorPhrase(err)}`, "check that this machine can reach discord.com (proxy, firewall), or DISCORD_API_URL") };
  }
  if (res.status === 401) return { ok: false, line: fail(label, "Discord refused DISCORD_TOKEN (401 Unauthorized)", `reset the token under Bot in the developer portal (${PORTAL}) and set DISCORD_TOKEN to it`) };
  if (res.status === 429) return { ok: false, line: fail(label, `Discord rate limited GET ${path} (429)`, "run the doctor again in a minute") };
  const parsed = schema.safeParse(await res.json().catch(() => null));
  if (!res.ok || !parsed.success) return { ok: false, line: fail(label, `Discord answered GET ${path} with HTTP ${res.status}`, "check DISCORD_API_URL (default https://discord.com/api)") };
  return { ok: true, value: parsed.data };
}

export async function checkDiscord(cfg: Config, signal: AbortSignal): Promise<CheckLine[]> {
  if (!cfg.DISCORD_TOKEN) return [];
  const base = (cfg.DISCORD_API_URL ?? DISCORD_API).replace(/\/+$/, "");
  const login = "Discord bot token";
  const user = await get(base, "/users/@me", cfg.DISCORD_TOKEN, UserSchema, login, signal);
  if (!user.ok) return [user.line];
  if (!user.value.bot) return [fail(login, "DISCORD_TOKEN is not a bot token", `copy the token under Bot in the developer portal (${PORTAL})`)];
  const lines = [pass(login, `logged in as ${user.value.username} (${user.value.id})`)];

  const appLabel = "Discord application";
  const app = await get(base, "/applications/@me", cfg.DISCORD_TOKEN, ApplicationSchema, appLabel, signal);
  if (!app.ok) return [...lines, app.line];
  const { id, name, flags = 0 } = app.value;
  if (cfg.DISCORD_APPLICATION_ID && cfg.DISCORD_APPLICATION_ID !== id) {
    lines.push(fail(appLabel, `DISCORD_TOKEN belongs to application ${id} (${name}), but DISCORD_APPLICATION_ID is ${cfg.DISCORD_APPLICATION_ID}`, `set DISCORD_APPLICATION_ID=${id}`));
  } else {
    lines.push(pass(appLabel, `${name} (${id})`));
  }
  const intent = "Discord Message Content intent";
  lines.push(
    flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED)
      ? pass(intent, "on")
      : fail(intent, "the Message Content intent is off: Discord would refuse cairn's gateway connection (close 4014)", `in the developer portal (${PORTAL}), your application, Bot, Privileged Gateway Intents: switch on Message Content Intent and save`),
  );
  return lines;
}
