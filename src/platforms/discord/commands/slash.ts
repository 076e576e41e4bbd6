/**
 * The `/cairn` slash command: its registration JSON and the interaction handler.
 *
 * One command with a subcommand per core command (help, me, skills, new, and whatever
 * `COMMANDS` gains later: the description map makes a new one a compile error until it is
 * described here). The core runs the command and shows its answer (`CorePort.answer`) through
 * the interaction (target.ts): private ones (help, lessons, forget, ...) ephemerally (flag
 * 64), seen only by the person who asked; public ones as messages recorded as deliveries, so a
 * reaction on them is feedback. `me`, `team` and `skills` answer with the core's view instead, as
 * embeds with buttons (../views/interactions.ts), ephemerally; the clicks on those buttons and the modals they open
 * come back here too.
 *
 * Unknown interactions (another command name, an unknown subcommand, a button or modal cairn did
 * not create) get a short ephemeral answer instead of Discord's "This interaction failed".
 */
import {
  ApplicationIntegrationType,
  InteractionContextType,
  MessageFlags,
  SlashCommandBuilder,
  type ChatInputCommandInteraction,
  type Interaction,
  type RESTPostAPIApplicationCommandsJSONBody,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from "discord.js";
import type { CorePort } from "../../../ground/adapter.ts";
import type { Inbound } from "../../../ground/types.ts";
import { commandArgs, COMMANDS, parseCommand, type CommandName } from "../../../ground/commands.ts";
import type { Logger } from "../../../ground/log.ts";
import { SCHEDULE_NAMES } from "../../../jobs/schedules.ts";
import { slashTarget } from "./target.ts";
import { inChannel, interactionInbound, SLASH_COMMAND } from "./inbound.ts";
import { listenedChannelOf } from "../knowledge/place.ts";
import { DISCORD_PANES, type DiscordPane } from "../views/ids.ts";
import { answerView, handleViewButton, handleViewModal } from "../views/interactions.ts";
import { runWhyMenu, whyMenuCommand, WHY_MENU } from "./why-menu.ts";

export { SLASH_COMMAND };

interface SubcommandSpec {
  description: string;
  /** One free-text option, made into the core command's arguments (`commandArgs`). */
  option?: { name: string; description: string; required: boolean; maxLength?: number };
  /** An optional pick from fixed values, made into the words `words(value)` (before the flags). */
  choice?: { name: string; description: string; values: readonly string[]; words: (value: string) => string[] };
  /** Optional true/false options, each made into its word when true. */
  flags?: readonly { name: string; description: string; word: string }[];
  /** The answer is usually public and slow (a model run): deferred at once, publicly. */
  publicAnswer?: boolean;
}

const SUBCOMMANDS: Record<CommandName, SubcommandSpec> = {
  help: { description: "What cairn can do and how to talk to it" },
  me: { description: "Everything cairn holds about you (only you see the answer)" },
  team: { description: "The team's rules, this channel's lessons, proposals waiting, and team memory" },
  skills: { description: "The team's skill library" },
  learn: {
    description: "Turn pasted text, or this conversation, into a skill for the team",
    option: { name: "text", description: "The text to learn from (leave empty to learn from this conversation)", required: false, maxLength: 6000 },
    publicAnswer: true,
  },
  lessons: { description: "The lessons and team rules you can see, with ids and where each came from" },
  why: { description: "What cairn's last answer here drew on (Apps → Why this answer? picks any answer)" },
  keep: { description: "Keep a doubtful rule (admins), or say which of two disagreeing entries holds", option: { name: "id", description: "The rule's id, or new|old|both and the id in cairn's question", required: true } },
  verify: { description: "Say shared items still hold (the team view's Still true)", option: { name: "ids", description: "Item ids, separated by spaces", required: false } },
  reword: {
    description: "Reword a team rule (admins): <id> <the rule as it should read>",
    option: { name: "change", description: "The rule's id, then its new wording", required: true, maxLength: 1000 },
  },
  new: { description: "Start a fresh session in this conversation (earlier ones stay searchable)" },
  forget: {
    description: "Delete one of your entries, or everything cairn holds about you",
    option: { name: "what", description: "An id from /cairn me or /cairn lessons, or: me (then: me confirm)", required: true },
  },
  confirm: {
    description: "Share entries you proposed from a DM with the team",
    option: { name: "ids", description: "Entry ids, separated by spaces (default: all waiting)", required: false },
  },
  approve: { description: "Approve a proposed team rule or skill change (as ✅ does; not your own)", option: { name: "id", description: "The proposal's id (from /cairn team)", required: true } },
  reject: { description: "Reject a proposed team rule or skill change (not your own)", option: { name: "id", description: "The proposal's id (from /cairn team)", required: true } },
  archive: { description: "Archive a skill (admins; restore brings it back)", option: { name: "skill", description: "The skill's name", required: true } },
  restore: { description: "Restore an archived skill (admins)", option: { name: "skill", description: "The skill's name", required: true } },
  persona: {
    description: "How cairn speaks here; admins: set <text> or clear",
    option: { name: "change", description: "set <text>, or clear (admins); empty: show it", required: false, maxLength: 4000 },
  },
  pin: { description: "Pin a skill so the curator keeps it (admins)", option: { name: "skill", description: "The skill's name", required: true } },
  unpin: { description: "Unpin a skill (admins)", option: { name: "skill", description: "The skill's name", required: true } },
  listen: {
    description: "Keep this channel's messages so its readers can ask what was said (on/off: admins)",
    choice: { name: "action", description: "on, off, status (default), exclude-me or include-me", values: ["on", "off", "status", "exclude-me", "include-me"], words: (value) => [value] },
  },
  report: { description: "The latest weekly self-review of this workspace (only you see it)" },
  history: {
    description: "Every change to a skill or memory entry, with revision ids",
    option: { name: "what", description: "A skill's name, an entry id, or a curator run id", required: true },
  },
  rollback: {
    description: "Undo one change to a skill or entry (admins; your own private items: you)",
    option: { name: "revision", description: "A revision id from /cairn history", required: true },
  },
  teachers: {
    description: "Trusted teachers: their team writes need no approval (admins): list, add <user>, remove <user>",
    option: { name: "change", description: "list (default), add @someone, or remove @someone", required: false },
  },
  jobs: {
    description: "The curator's and the weekly report's last and next runs; admins can run one now",
    choice: { name: "run", description: "Run this job now (admins)", values: SCHEDULE_NAMES, words: (value) => ["run", value] },
    flags: [{ name: "dry_run", description: "With run curator: only say what it would change, change nothing", word: "--dry-run" }],
  },
  correct: { description: "Correct cairn's last answer here", option: { name: "text", description: "What was wrong, and what is right", required: true, maxLength: 2000 }, publicAnswer: true },
  good: { description: "Say cairn's last answer here was right" },
};

/**
 * Discord takes at most 25 subcommands: these commands are not registered there. `verify` is reached
 * through the views' buttons (a click runs the command line, ../views/ids.ts): *Still true*.
 * `correct` and `good` are the console's 👎 and 👍: on Discord, reactions (and corrections typed in words) are.
 */
export const BUTTON_ONLY: ReadonlySet<CommandName> = new Set(["verify", "correct", "good"]);

export const UNKNOWN_INTERACTION_REPLY = "I don't know that one. Try `/cairn help` to see what I can do.";

/** The JSON `PUT /applications/{app}/commands` takes (global or per guild): `/cairn`, and the message menu's "Why this answer?". */
export function slashCommands(): RESTPostAPIApplicationCommandsJSONBody[] {
  return [slashCommand(), whyMenuCommand()];
}

/** `/cairn` with its subcommands. */
export function slashCommand(): RESTPostAPIChatInputApplicationCommandsJSONBody {
  const builder = new SlashCommandBuilder()
    .setName(SLASH_COMMAND)
    .setDescription("cairn, the team bot that remembers")
    // In guilds and in DMs with the bot; not as a user-installed app in other people's servers,
    // where cairn has no workspace to answer from.
    .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall);
  for (const name of COMMANDS.filter((c) => !BUTTON_ONLY.has(c))) {
    const spec = SUBCOMMANDS[name];
    builder.addSubcommand((sub) => {
      sub.setName(name).setDescription(spec.description);
      const option = spec.option;
      if (option) sub.addStringOption((o) => o.setName(option.name).setDescription(option.description).setRequired(option.required).setMaxLength(option.maxLength ?? 200));
      const choice = spec.choice;
      if (choice) sub.addStringOption((o) => o.setName(choice.name).setDescription(choice.description).setRequired(false).addChoices(...choice.values.map((v) => ({ name: v, value: v }))));
      for (const flag of spec.flags ?? []) sub.addBooleanOption((o) => o.setName(flag.name).setDescription(flag.description).setRequired(false));
      return sub;
    });
  }
  return builder.toJSON();
}

export interface InteractionDeps {
  core: CorePort;
  log: Logger;
  deferAfterMs: number;
}

export async function handleInteraction(interaction: Interaction, deps: InteractionDeps): Promise<void> {
  if (interaction.isAutocomplete()) {
    // cairn's options have no autocompletion; an empty list closes the picker cleanly.
    await interaction.respond([]);
    return;
  }
  if (!interaction.isRepliable()) return;
  // A click on a view's button, a view's modal submitted (../views/interactions.ts); anything else not cairn's falls through.
  if (interaction.isButton() && inChannel(interaction) && (await handleViewButton(interaction, deps))) return;
  if (interaction.isModalSubmit() && inChannel(interaction) && (await handleViewModal(interaction, deps))) return;
  if (interaction.isMessageContextMenuCommand() && interaction.commandName === WHY_MENU) return runWhyMenu(interaction, deps);
  const name =
    interaction.isChatInputCommand() && interaction.commandName === SLASH_COMMAND ? parseCommand(interaction.options.getSubcommand(false) ?? "") : null;
  if (!interaction.isChatInputCommand() || !name) {
    deps.log.info({ type: interaction.type, id: interaction.id }, "unknown interaction answered");
    await interaction.reply({ content: UNKNOWN_INTERACTION_REPLY, flags: MessageFlags.Ephemeral });
    return;
  }
  await runSlashCommand(interaction, name, deps);
}

const isPane = (name: CommandName): name is DiscordPane => (DISCORD_PANES as readonly string[]).includes(name);

async function runSlashCommand(interaction: ChatInputCommandInteraction, name: CommandName, deps: InteractionDeps): Promise<void> {
  // me, team, skills: the view, with buttons (../views/interactions.ts).
  if (isPane(name)) return answerView(interaction, name, deps);
  const args = argsOf(interaction, name);
  // A model run (learn) takes longer than Discord's 3 s: it is deferred at once, publicly.
  const target = slashTarget(interaction, { publicFirst: SUBCOMMANDS[name].publicAnswer === true, deferAfterMs: deps.deferAfterMs, log: deps.log });
  try {
    const answered = await deps.core.answer(await commandInbound(interaction, name, args), { name, args }, target);
    deps.log.info({ command: name, visibility: answered.visibility, parts: answered.posted.length, failed: answered.failed }, "slash command answered");
  } finally {
    target.close();
  }
}

/**
 * The Inbound a command runs as. `listen` is about a channel: run in a thread, it is about the
 * thread's parent, where listening is turned on and the thread's messages are kept.
 */
async function commandInbound(interaction: ChatInputCommandInteraction, name: CommandName, args: readonly string[]): Promise<Inbound> {
  const inbound = interactionInbound(interaction, name, args);
  if (name !== "listen" || inbound.channel.isDm) return inbound;
  const channel = await listenedChannelOf(interaction.client, inbound.channel.externalId);
  return channel === inbound.channel.externalId ? inbound : { ...inbound, channel: { ...inbound.channel, externalId: channel }, threadId: null };
}

/** The core command's arguments from the subcommand's options, as a Slack or console user would type them. */
function argsOf(interaction: ChatInputCommandInteraction, name: CommandName): string[] {
  const spec = SUBCOMMANDS[name];
  const optionName = spec.option?.name;
  const args = commandArgs(name, optionName ? (interaction.options.getString(optionName) ?? "") : "");
  const picked = spec.choice ? interaction.options.getString(spec.choice.name) : null;
  if (spec.choice && picked) args.push(...spec.choice.words(picked));
  for (const flag of spec.flags ?? []) if (interaction.options.getBoolean(flag.name) === true) args.push(flag.word);
  return args;
}
