/**
 * "Why this answer?", the message context-menu command (Apps → Why this answer? on any message): the
 * why command about that message, answered ephemerally to whoever picked it. The core finds the
 * answer through the deliveries of that channel (a thread is its own channel on Discord) and says
 * so when the message is not one of cairn's answers. Registered beside `/cairn` (slash.ts).
 */
import { ApplicationCommandType, ApplicationIntegrationType, ContextMenuCommandBuilder, InteractionContextType, type MessageContextMenuCommandInteraction, type RESTPostAPIContextMenuApplicationCommandsJSONBody } from "discord.js";
import { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import type { Logger } from "../../../ground/log.ts";
import { interactionInbound } from "./inbound.ts";
import { slashTarget } from "./target.ts";

/** The command's name as the menu shows it. */
export const WHY_MENU = "Why this answer?";

/** A message id as Discord sends it: a snowflake. */
const TargetSchema = z.object({ targetId: z.string().regex(/^\d{15,25}$/), channelId: z.string().min(1) });

/** The JSON registered with the slash commands: a message command, where `/cairn` is offered. */
export function whyMenuCommand(): RESTPostAPIContextMenuApplicationCommandsJSONBody {
  return new ContextMenuCommandBuilder()
    .setName(WHY_MENU)
    .setType(ApplicationCommandType.Message)
    .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    .toJSON();
}

export async function runWhyMenu(interaction: MessageContextMenuCommandInteraction, deps: { core: CorePort; log: Logger; deferAfterMs: number }): Promise<void> {
  const parsed = TargetSchema.safeParse({ targetId: interaction.targetId, channelId: interaction.channelId });
  if (!parsed.success) {
    deps.log.warn({ id: interaction.id, detail: z.prettifyError(parsed.error) }, "malformed why menu command ignored");
    return;
  }
  const { targetId } = parsed.data;
  const target = slashTarget(interaction, { publicFirst: false, deferAfterMs: deps.deferAfterMs, log: deps.log });
  try {
    // No place: the answer is the asker's alone.
    const answered = await deps.core.answer(interactionInbound(interaction, "why", [targetId]), { name: "why", args: [targetId] }, { private: target.private });
    deps.log.info({ message: targetId, failed: answered.failed }, "why menu answered");
  } finally {
    target.close();
  }
}
