/**
 * `/cairn help|me|skills|new|...` (the core's command set, with arguments): acknowledged at once
 * (Slack allows 3 s), then handed to the core, which runs it and shows the answer (`CorePort.answer`):
 * privately through the command's response_url (Slack's ephemeral answer), or publicly as the
 * bot's own message in the channel, recorded as deliveries so reactions on it are feedback.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { RespondFn } from "@slack/bolt";
import type { CorePort, PrivateReply } from "../../../ground/adapter.ts";
import { COMMANDS, parseCommandLine } from "../../../ground/commands.ts";
import type { Inbound } from "../../../ground/types.ts";
import type { Logger } from "../../../ground/log.ts";
import type { SlackClient } from "../client.ts";
import { slackErrorCode } from "../errors.ts";
import type { BotIdentity } from "../events.ts";
import { toMrkdwn } from "../mrkdwn.ts";
import type { NameCache } from "../names.ts";
import { placeTarget } from "../replies/target.ts";

export const SLASH_COMMAND = "/cairn";

/** `/cairn learn` alone in a channel: Slack does not say which thread it was typed in. */
export const SLACK_NO_THREAD =
  "Slack does not tell me which thread a slash command was typed in. Mention me in the thread with `learn` (`@cairn learn`), or paste the text: `/cairn learn <text>`.";

/** Slack's `<url|label>` and `<url>` (web links) as Markdown, which is what the core reads in a command's text. */
export function markdownLinks(text: string): string {
  return text.replace(/<(https?:[^|>\s]+)(?:\|([^>]*))?>/g, (_m, url: string, label: string | undefined) => (label && label !== url ? `[${label}](${url})` : url));
}

export const CommandPayloadSchema = z.looseObject({
  command: z.string(),
  text: z.string().default(""),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  team_id: z.string().min(1),
  trigger_id: z.string().optional(),
  response_url: z.string().optional(),
});

export interface CommandDeps {
  core: CorePort;
  client: SlackClient;
  names: NameCache;
  bot: BotIdentity;
  log: Logger;
}

export async function runSlashCommand(deps: CommandDeps, payload: unknown, respond: RespondFn | undefined): Promise<void> {
  const parsed = CommandPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    deps.log.warn({ detail: z.prettifyError(parsed.error) }, "malformed slash command ignored");
    return;
  }
  const p = parsed.data;
  const log = deps.log.child({ team: p.team_id, channel: p.channel_id, user: p.user_id, command: `${p.command} ${p.text}`.trim() });
  const privately = privateReply(deps, p, respond, log);
  const line = parseCommandLine(markdownLinks(p.text));
  if (!line) {
    await privately.send(toMrkdwn(`I don't know \`${p.text.trim().split(/\s+/)[0]}\`. Try ${COMMANDS.map((c) => `\`${SLASH_COMMAND} ${c}\``).join(", ")}.`)).catch(() => undefined);
    return;
  }
  // On Slack every channel conversation is a thread, and a slash command arrives without one:
  // learning from "this conversation" needs the thread, which a mention in it gives (learn-mention.ts).
  if (line.name === "learn" && line.args.length === 0 && !isDmChannel(p.channel_id)) {
    await privately.send(toMrkdwn(SLACK_NO_THREAD)).catch(() => undefined);
    log.info("learn without a thread answered");
    return;
  }
  const person = await deps.names.get(p.user_id);
  // A public answer is the bot's own message in the channel (a ts, so reactions on it are feedback);
  // Slack's slash commands name no thread, so it goes on the channel's main line.
  const answered = await deps.core.answer(commandInbound(p, person.displayName), line, { place: placeTarget(deps.client, p.channel_id, undefined), private: privately });
  log.info({ visibility: answered.visibility, parts: answered.posted.length, failed: answered.failed }, "slash command answered");
}

function commandInbound(p: z.infer<typeof CommandPayloadSchema>, displayName: string | undefined): Inbound {
  return {
    platform: "slack",
    workspace: { externalId: p.team_id },
    author: { externalId: p.user_id, ...(displayName ? { displayName } : {}) },
    channel: { externalId: p.channel_id, isDm: isDmChannel(p.channel_id) },
    threadId: null,
    messageId: `slash:${p.trigger_id ?? randomUUID()}`,
    text: `${p.command} ${p.text}`.trim(),
    sentAt: new Date(),
  };
}

const isDmChannel = (id: string): boolean => id.startsWith("D");

/** The asker alone sees it: through the command's response_url, else the Web API's ephemeral post. */
function privateReply(deps: CommandDeps, p: z.infer<typeof CommandPayloadSchema>, respond: RespondFn | undefined, log: Logger): PrivateReply {
  return {
    send: async (text) => {
      if (respond) {
        try {
          await respond({ response_type: "ephemeral", text });
          return;
        } catch (err) {
          log.warn({ error: slackErrorCode(err) }, "response_url failed; answering with the Web API");
        }
      }
      try {
        await deps.client.chat.postEphemeral({ channel: p.channel_id, user: p.user_id, text });
      } catch (err) {
        log.error({ error: slackErrorCode(err) }, "could not answer the slash command");
        throw err;
      }
    },
  };
}
