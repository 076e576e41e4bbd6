/**
 * Where the core shows a slash command's answer on Discord (`CommandTarget`): the interaction's
 * answer, public (a message in the channel, whose id is recorded so reactions on it are feedback)
 * or ephemeral (flag 64, the asker alone), its first part the interaction's answer and the rest
 * follow-ups with the same visibility.
 *
 * Discord wants a first answer within 3 seconds. A command slower than `deferAfterMs` is deferred
 * ephemerally (the kind of answer is not known yet: private is the safe side); a command whose
 * answer is usually public and slow (`learn`, a model run) is deferred at once, publicly. Should the
 * answer turn out to be of the other kind, the placeholder is deleted and the answer follows as a
 * follow-up seen as it should be.
 */
import { MessageFlags, type CommandInteraction, type Message } from "discord.js";
import type { CommandTarget } from "../../../ground/adapter.ts";
import { errText, type Logger } from "../../../ground/log.ts";
import { FirstAnswer } from "./deferral.ts";

const NO_PINGS = { parse: [] };

type Visibility = "public" | "private";

export interface SlashTarget extends CommandTarget {
  readonly private: NonNullable<CommandTarget["private"]>;
  /** The command is answered: no deferral after it. */
  close(): void;
}

export function slashTarget(interaction: CommandInteraction, opts: { publicFirst: boolean; deferAfterMs: number; log: Logger }): SlashTarget {
  const deferredAs: Visibility = opts.publicFirst ? "public" : "private";
  const first = new FirstAnswer(() => interaction.deferReply(opts.publicFirst ? {} : { flags: MessageFlags.Ephemeral }), opts.deferAfterMs);
  if (opts.publicFirst) first.deferNow();
  let started = false;
  const show = async (content: string, visibility: Visibility): Promise<Message | null> => {
    const flags = visibility === "private" ? { flags: MessageFlags.Ephemeral as const } : {};
    const followUp = () => interaction.followUp({ content, ...flags, allowedMentions: NO_PINGS });
    if (started) return followUp();
    started = true;
    return first.answer(
      async () => (await interaction.reply({ content, ...flags, allowedMentions: NO_PINGS, withResponse: true })).resource?.message ?? null,
      async () => {
        if (visibility === deferredAs) return interaction.editReply({ content, allowedMentions: NO_PINGS });
        // The placeholder has the other visibility: a private answer must not land in a public one.
        await interaction.deleteReply().catch((err: unknown) => opts.log.warn({ err: errText(err), interaction: interaction.id }, "could not delete the deferred answer"));
        return followUp();
      },
    );
  };
  return {
    place: {
      channelId: interaction.channelId,
      send: async (text) => {
        const message = await show(text, "public");
        if (!message) throw new Error("Discord did not return the message of the command's answer");
        return message.id;
      },
    },
    private: { send: async (text) => void (await show(text, "private")) },
    close: () => first.close(),
  };
}
