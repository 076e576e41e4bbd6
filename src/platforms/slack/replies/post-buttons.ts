/**
 * Buttons on the core's own posts (a report, a reminder, the admins' digest: RichSection.buttons)
 * as Block Kit `actions`, and a click on one. Every button's value is a command line ("approve
 * 123"): a click runs exactly that command as the person who clicked, in the channel they clicked
 * in, through the core's command path (`CorePort.answer`), with their rights: the core checks who
 * may, as for the typed command. The answer goes to the clicker alone (an ephemeral message); the
 * post stays as it is, for everyone else to act on too.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { types } from "@slack/bolt";
import type { CorePort } from "../../../ground/adapter.ts";
import { parseCommandLine } from "../../../ground/commands.ts";
import type { Inbound } from "../../../ground/types.ts";
import type { Logger } from "../../../ground/log.ts";
import type { ViewButton } from "../../../ground/view-model.ts";
import type { SlackBlock, SlackClient } from "../client.ts";
import { slackErrorCode } from "../errors.ts";
import type { NameCache } from "../names.ts";
import { HOME_LIMITS, clip, commandLine, plain } from "../home/blocks.ts";

/** A post button's action_id: `cairn_post:<n>`, n keeping it unique in the message as Slack requires. */
export const POST_ACTION_ID = /^cairn_post:\d+$/;
const ACTIONS_ELEMENTS = 25;

/** The buttons as actions blocks of at most 25 elements; a button whose command line a value cannot hold is left out (its typed form is in the text). */
export function postButtonBlocks(buttons: readonly ViewButton[], next: () => number): SlackBlock[] {
  const elements = buttons.flatMap((b): types.Button[] => {
    const value = commandLine(b);
    if (value.length > HOME_LIMITS.value) return [];
    const confirm = b.confirm && {
      title: plain(b.confirm.title, HOME_LIMITS.confirmTitle),
      text: plain(b.confirm.text, HOME_LIMITS.confirmText),
      confirm: plain(b.confirm.yes, HOME_LIMITS.confirmButton),
      deny: plain(b.confirm.no, HOME_LIMITS.confirmButton),
    };
    return [{ type: "button", action_id: `cairn_post:${next()}`, text: plain(b.label), value, ...(b.style ? { style: b.style } : {}), ...(confirm ? { confirm } : {}) }];
  });
  const out: SlackBlock[] = [];
  for (let i = 0; i < elements.length; i += ACTIONS_ELEMENTS) out.push({ type: "actions", elements: elements.slice(i, i + ACTIONS_ELEMENTS) });
  return out;
}

/** The fields of a click on a message's button this needs; Slack sends many more. */
export const PostActionSchema = z.looseObject({
  type: z.literal("block_actions"),
  user: z.looseObject({ id: z.string().min(1), team_id: z.string().optional() }),
  // Null for an org-wide install; the clicker's team_id stands in.
  team: z.looseObject({ id: z.string().min(1) }).nullish(),
  channel: z.looseObject({ id: z.string().min(1) }).nullish(),
  container: z.looseObject({ channel_id: z.string().optional() }).nullish(),
  trigger_id: z.string().optional(),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().max(2000).optional() })).min(1),
});

export interface PostActionDeps {
  core: CorePort;
  client: SlackClient;
  names: NameCache;
  log: Logger;
}

/** Runs the clicked button's command as the clicker and shows them its answer. */
export async function onPostAction(deps: PostActionDeps, body: unknown): Promise<void> {
  const parsed = PostActionSchema.safeParse(body);
  if (!parsed.success) {
    deps.log.warn({ detail: z.prettifyError(parsed.error) }, "malformed post button click ignored");
    return;
  }
  const b = parsed.data;
  const action = b.actions.find((a) => POST_ACTION_ID.test(a.action_id));
  const team = b.team?.id ?? b.user.team_id;
  const channel = b.channel?.id ?? b.container?.channel_id;
  const line = action?.value === undefined ? null : parseCommandLine(action.value);
  if (!team || !channel || !action?.value || !line) {
    deps.log.warn({ user: b.user.id, action: action?.action_id }, "post button click without a team, a channel or a command ignored");
    return;
  }
  const person = await deps.names.get(b.user.id);
  const inbound: Inbound = {
    platform: "slack",
    workspace: { externalId: team },
    author: { externalId: b.user.id, ...(person.displayName ? { displayName: person.displayName } : {}), ...(person.isBot ? { isBot: true } : {}) },
    channel: { externalId: channel, isDm: channel.startsWith("D") },
    threadId: null,
    messageId: `button:${b.trigger_id ?? randomUUID()}`,
    text: `/cairn ${clip(action.value, 2000)}`,
    sentAt: new Date(),
  };
  // Private only (no `place`): the answer is the clicker's, and the post stays as it was for the others.
  const send = async (text: string): Promise<void> => {
    try {
      await deps.client.chat.postEphemeral({ channel, user: b.user.id, text });
    } catch (err) {
      deps.log.warn({ error: slackErrorCode(err), user: b.user.id }, "could not show a post button's answer");
      throw err;
    }
  };
  const answered = await deps.core.answer(inbound, line, { private: { send } });
  deps.log.info({ user: b.user.id, command: line.name, failed: answered.failed }, "post button ran a command");
}
