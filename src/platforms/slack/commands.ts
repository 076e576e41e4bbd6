/**
 * `/cairn help|me|skills|new|...` (the core's command set, with arguments): acknowledged at once (Slack allows 3 s), then answered through the
 * command's response_url, ephemerally unless the command says otherwise. The answers come from the
 * core's command set, so every platform says the same.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { RespondFn } from "@slack/bolt";
import type { CorePort } from "../../ground/adapter.ts";
import { COMMANDS, parseCommandLine } from "../../ground/commands.ts";
import type { Inbound } from "../../ground/types.ts";
import type { Logger } from "../../ground/log.ts";
import { chunkText } from "../../ground/chunk.ts";
import { SLACK_CHUNK_LIMIT } from "./chunk.ts";
import type { SlackClient } from "./client.ts";
import { slackErrorCode } from "./errors.ts";
import type { BotIdentity } from "./events.ts";
import { toMrkdwn } from "./mrkdwn.ts";
import type { NameCache } from "./names.ts";

export const SLASH_COMMAND = "/cairn";

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
  const line = parseCommandLine(p.text);
  let text: string;
  let ephemeral = true;
  if (!line) {
    text = `I don't know \`${p.text.trim().split(/\s+/)[0]}\`. Try ${COMMANDS.map((c) => `\`${SLASH_COMMAND} ${c}\``).join(", ")}.`;
  } else {
    try {
      const person = await deps.names.get(p.user_id);
      const reply = await deps.core.command(commandInbound(p, person.displayName), line.name, line.args);
      text = reply.text;
      ephemeral = reply.ephemeral;
    } catch (err) {
      log.error({ err }, "slash command failed");
      text = "Sorry, something went wrong on my side running that command. Please try again.";
    }
  }
  // Command answers are Markdown, like every text inside cairn.
  for (const chunk of chunkText(toMrkdwn(text), { maxChars: SLACK_CHUNK_LIMIT, maxLines: Number.POSITIVE_INFINITY })) {
    await send(deps, p, chunk, ephemeral, respond, log);
  }
  log.info({ ephemeral }, "slash command answered");
}

function commandInbound(p: z.infer<typeof CommandPayloadSchema>, displayName: string | undefined): Inbound {
  return {
    platform: "slack",
    workspace: { externalId: p.team_id },
    author: { externalId: p.user_id, ...(displayName ? { displayName } : {}) },
    channel: { externalId: p.channel_id, isDm: p.channel_id.startsWith("D") },
    threadId: null,
    messageId: `slash:${p.trigger_id ?? randomUUID()}`,
    text: `${p.command} ${p.text}`.trim(),
    sentAt: new Date(),
  };
}

async function send(deps: CommandDeps, p: z.infer<typeof CommandPayloadSchema>, text: string, ephemeral: boolean, respond: RespondFn | undefined, log: Logger): Promise<void> {
  if (respond) {
    try {
      await respond({ response_type: ephemeral ? "ephemeral" : "in_channel", text });
      return;
    } catch (err) {
      log.warn({ error: slackErrorCode(err) }, "response_url failed; answering with the Web API");
    }
  }
  try {
    if (ephemeral) await deps.client.chat.postEphemeral({ channel: p.channel_id, user: p.user_id, text });
    else await deps.client.chat.postMessage({ channel: p.channel_id, text });
  } catch (err) {
    log.error({ error: slackErrorCode(err) }, "could not answer the slash command");
  }
}
