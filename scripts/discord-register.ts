/**
 * `npm run discord:register`: registers the `/cairn` slash command with Discord.
 *
 * Global (every guild and DM; Discord may take a while to show changes) unless DISCORD_GUILD_ID is
 * set, which registers in that guild only (instant: use it while developing). A PUT replaces the
 * application's whole command list, so running it again after an upgrade is the way to update.
 *
 * Settings from the environment (or .env): DISCORD_TOKEN, DISCORD_APPLICATION_ID, optional
 * DISCORD_API_URL (another REST base, e.g. a proxy or a test server) and DISCORD_GUILD_ID.
 */
import { pathToFileURL } from "node:url";
import dotenv from "dotenv";
import { DiscordAPIError, REST, Routes } from "discord.js";
import { z } from "zod";
import { SLASH_COMMAND, slashCommands } from "../src/platforms/discord/commands/slash.ts";
import { inviteUrl } from "../src/platforms/discord/install.ts";

export interface RegisterSettings {
  token: string;
  applicationId: string;
  apiUrl?: string;
  guildId?: string;
}

const snowflake = z.string().trim().regex(/^\d{17,20}$/, "expected a Discord id (17 to 20 digits)");
/** Unset and empty (as `.env` templates leave them) both mean "not given". */
const optional = <T extends z.ZodType<string | undefined, string | undefined>>(schema: T) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .pipe(schema);

const EnvSchema = z.object({
  DISCORD_TOKEN: z.string({ error: "required: the bot token (developer portal → Bot)" }).trim().min(1, "required: the bot token (developer portal → Bot)"),
  DISCORD_APPLICATION_ID: snowflake,
  DISCORD_API_URL: optional(z.url({ message: "expected a URL like https://discord.com/api" }).optional()),
  DISCORD_GUILD_ID: optional(snowflake.optional()),
});

/** Reads and validates the settings; the error names every wrong variable. */
export function registerSettingsFromEnv(env: Record<string, string | undefined>): RegisterSettings {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${i.path.join(".") || "(environment)"}: ${i.message}`);
    throw new Error(`cannot register Discord commands:\n${problems.join("\n")}`);
  }
  const e = parsed.data;
  return {
    token: e.DISCORD_TOKEN,
    applicationId: e.DISCORD_APPLICATION_ID,
    ...(e.DISCORD_API_URL ? { apiUrl: e.DISCORD_API_URL } : {}),
    ...(e.DISCORD_GUILD_ID ? { guildId: e.DISCORD_GUILD_ID } : {}),
  };
}

const Registered = z.array(z.looseObject({ id: z.string(), name: z.string() }));

export interface RegisterResult {
  scope: "global" | "guild";
  route: string;
  commands: { id: string; name: string }[];
}

export async function registerCommands(s: RegisterSettings): Promise<RegisterResult> {
  const rest = new REST({ version: "10", ...(s.apiUrl ? { api: s.apiUrl } : {}) }).setToken(s.token);
  const route = s.guildId ? Routes.applicationGuildCommands(s.applicationId, s.guildId) : Routes.applicationCommands(s.applicationId);
  try {
    const answer = Registered.parse(await rest.put(route, { body: slashCommands() }));
    return { scope: s.guildId ? "guild" : "global", route, commands: answer.map(({ id, name }) => ({ id, name })) };
  } finally {
    // The REST client's sweep timers would otherwise outlive a one-shot script.
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
  }
}

async function main(): Promise<number> {
  dotenv.config({ quiet: true });
  let settings: RegisterSettings;
  try {
    settings = registerSettingsFromEnv(process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const result = await registerCommands(settings);
  const where = result.scope === "guild" ? `in guild ${settings.guildId}` : "globally (may take a while to show everywhere)";
  // `/cairn`, and the message menu's command, which has no slash.
  process.stdout.write(`Registered ${result.commands.map((c) => (c.name === SLASH_COMMAND ? `/${c.name}` : `"${c.name}" (message menu)`)).join(", ")} ${where}.\n`);
  process.stdout.write(`Invite URL: ${inviteUrl(settings.applicationId)}\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      const hint = err instanceof DiscordAPIError && err.status === 401 ? " (check DISCORD_TOKEN: developer portal → Bot → Reset Token)" : "";
      process.stderr.write(`discord:register failed: ${err instanceof Error ? err.message : String(err)}${hint}\n`);
      process.exit(1);
    },
  );
}
