/**
 * A command's answer as Discord messages: parts within 2,000 characters (and a readable height),
 * the first in the interaction's answer, the rest as follow-ups with the same visibility.
 */
import type { InteractionReplyOptions, MessageFlags } from "discord.js";
import { chunkText } from "../../ground/chunk.ts";
import { errText, type Logger } from "../../ground/log.ts";
import { DISCORD_MAX_LINES, DISCORD_MESSAGE_LIMIT } from "./limits.ts";

export const COMMAND_FAILED_REPLY = "Sorry, something went wrong on my side while answering that command. Please try again.";

export function partsOf(text: string): [string, ...string[]] {
  const [first, ...rest] = chunkText(text, { maxChars: DISCORD_MESSAGE_LIMIT, maxLines: DISCORD_MAX_LINES });
  return first === undefined ? ["(nothing to show)"] : [first, ...rest];
}

/** What follow-ups need of an interaction (every repliable kind has it). */
export interface FollowsUp {
  readonly id: string;
  followUp(options: InteractionReplyOptions): Promise<unknown>;
}

/** Posts `parts` as follow-ups; a failure is logged and ends the series (the rest would read out of order). */
export async function followUps(interaction: FollowsUp, parts: readonly string[], flags: MessageFlags.Ephemeral | undefined, log: Logger): Promise<void> {
  for (const content of parts) {
    try {
      await interaction.followUp({ content, ...(flags ? { flags } : {}), allowedMentions: { parse: [] } });
    } catch (err) {
      log.warn({ err: errText(err), interaction: interaction.id }, "command answer follow-up failed");
      return;
    }
  }
}
