/**
 * A click on a Home tab button (`block_actions` from the Home view), acknowledged by the adapter at
 * once and handled here after:
 * - a command button runs its command line as the clicker, exactly as `/cairn <line>` would (same
 *   permission checks, same revisions). Done: the Home tab is published again with the answer on
 *   top. Refused or found nothing: nothing changed, and the answer is shown to the clicker in a
 *   small modal (the Home tab has no ephemeral messages);
 * - a button with a next step (Forget me) runs its command, then shows the answer in a modal whose
 *   submit runs the next command (submit.ts);
 * - a button that takes text (Edit persona) opens a modal with a text field first;
 * - Previous / Show more publish the Home tab again with that group's page.
 * The value of a button is only a command line: what a button with a next step or a text field
 * looks like is read from the core's view again, never from the payload.
 */
import { z } from "zod";
import { parseCommandLine, type CommandReply } from "../../../ground/commands.ts";
import { COMMAND_FAILED_REPLY } from "../../../ground/replies.ts";
import type { TeamView, ViewButton } from "../../../ground/view-model.ts";
import { toMrkdwn } from "../mrkdwn.ts";
import { slackErrorCode } from "../errors.ts";
import { actionKind, commandLine, parsePageValue } from "./blocks.ts";
import { answerModal, inputModal, nextModal } from "./modals.ts";
import { publishHome, viewerKey, type HomeDeps } from "./publish.ts";
import { decodeState, type HomeState } from "./state.ts";
import type { HomeViewer } from "./viewer.ts";
import type { types } from "@slack/bolt";

/** The fields of a Home tab click this needs; Slack sends many more. */
export const HomeActionSchema = z.looseObject({
  type: z.literal("block_actions"),
  user: z.looseObject({ id: z.string().min(1), team_id: z.string().optional() }),
  // Null for an org-wide install; the clicker's team_id stands in.
  team: z.looseObject({ id: z.string().min(1) }).nullish(),
  trigger_id: z.string().min(1),
  container: z.looseObject({ type: z.literal("view") }),
  view: z.looseObject({ type: z.literal("home"), private_metadata: z.string().optional() }),
  actions: z
    .array(z.looseObject({ action_id: z.string(), value: z.string().max(2000).optional(), text: z.looseObject({ text: z.string() }).optional() }))
    .min(1),
});

/** Refused or not found: the command changed nothing, and the clicker is told why. */
export const changedNothing = (reply: CommandReply): boolean => reply.outcome === "refused" || reply.outcome === "not_found";

export async function onHomeAction(deps: HomeDeps, body: unknown): Promise<void> {
  const parsed = HomeActionSchema.safeParse(body);
  if (!parsed.success) {
    deps.log.warn({ detail: z.prettifyError(parsed.error) }, "malformed home click ignored");
    return;
  }
  const b = parsed.data;
  const team = b.team?.id ?? b.user.team_id;
  const action = b.actions.find((a) => actionKind(a.action_id) !== null);
  const kind = action ? actionKind(action.action_id) : null;
  if (!team || !action || !kind || action.value === undefined) {
    deps.log.warn({ user: b.user.id, action: action?.action_id }, "home click without a team, a known action or a value ignored");
    return;
  }
  const viewer: HomeViewer = { team, user: b.user.id };
  const click: Click = { viewer, trigger: b.trigger_id, value: action.value, label: action.text?.text ?? "cairn", state: decodeState(b.view.private_metadata, deps.pageSize) };
  await deps.order.run(viewerKey(viewer), async () => {
    switch (kind) {
      case "page":
        return turnPage(deps, click);
      case "command":
        return runButton(deps, click);
      case "next":
        return runWithNext(deps, click);
      case "input":
        return askForText(deps, click);
    }
  });
}

interface Click {
  viewer: HomeViewer;
  trigger: string;
  /** The button's value: a command line, or a page for Previous / Show more. */
  value: string;
  label: string;
  state: HomeState;
}

async function turnPage(deps: HomeDeps, c: Click): Promise<void> {
  const target = parsePageValue(c.value);
  if (!target) {
    deps.log.warn({ user: c.viewer.user, value: c.value }, "home page click with an unreadable value ignored");
    return;
  }
  await publishHome(deps, c.viewer, { ...c.state, pages: { ...c.state.pages, [target.group]: target.page } }, { trigger: c.trigger });
}

async function runButton(deps: HomeDeps, c: Click): Promise<void> {
  const reply = await run(deps, c.viewer, c.value, [], c.trigger);
  if (changedNothing(reply)) await openModal(deps, c, answerModal(c.label, reply.text));
  else await publishHome(deps, c.viewer, c.state, { notice: toMrkdwn(reply.text), trigger: c.trigger });
}

async function runWithNext(deps: HomeDeps, c: Click): Promise<void> {
  const reply = await run(deps, c.viewer, c.value, [], c.trigger);
  const next = changedNothing(reply) ? undefined : (await buttonIn(deps, c, (b) => b.next !== undefined))?.next;
  await openModal(deps, c, next ? nextModal(c.label, reply.text, next, c.state) : answerModal(c.label, reply.text));
}

async function askForText(deps: HomeDeps, c: Click): Promise<void> {
  const found = await buttonIn(deps, c, (b) => b.input !== undefined);
  // Not offered to the clicker any more (no longer an admin): the field is still shown, and the
  // command answers the submission as it would answer anyone typing it.
  const input = found?.input ?? { title: c.label, label: c.label, initial: "", maxLength: 3000, multiline: true };
  const line = parseCommandLine(c.value);
  if (!line) return openModal(deps, c, answerModal(c.label, `I don't know \`${c.value}\`.`));
  await openModal(deps, c, inputModal({ label: c.label, command: line.name, args: line.args, input }, c.state));
}

/**
 * Runs a command line as the viewer, `extra` added as its last arguments; a failure is an answer
 * (logged), in the core's one wording. The Home tab shows no messages: its answers go on the tab or
 * into a modal, so this asks the core for the bare answer (`command`), not for it to be shown.
 */
export async function run(deps: HomeDeps, viewer: HomeViewer, value: string, extra: readonly string[], trigger: string | undefined): Promise<CommandReply> {
  const line = parseCommandLine(value);
  if (!line) return { text: `I don't know \`${value.split(/\s+/)[0]}\`.`, ephemeral: true, outcome: "not_found" };
  try {
    const inbound = await deps.viewers.inbound(viewer, [value, ...extra].join(" "), trigger);
    const reply = await deps.core.command(inbound, line.name, [...line.args, ...extra]);
    deps.log.info({ user: viewer.user, command: line.name, outcome: reply.outcome ?? null }, "home command run");
    return reply;
  } catch (err) {
    deps.log.error({ err, user: viewer.user, command: line.name }, "home command failed");
    return { text: COMMAND_FAILED_REPLY, ephemeral: true, outcome: "refused" };
  }
}

/** The viewer's own button with this command line in a fresh view, where its next step or text field is read. */
async function buttonIn(deps: HomeDeps, c: Click, want: (b: ViewButton) => boolean): Promise<ViewButton | undefined> {
  const inbound = await deps.viewers.inbound(c.viewer, "home", c.trigger, { named: false });
  // Section buttons do not depend on channels or pages: the smallest view holds them.
  const view = await deps.core.view(inbound, { pane: "home", pageSize: 1, channels: [] });
  return buttons(view).find((b) => commandLine(b) === c.value && want(b));
}

function buttons(view: TeamView): ViewButton[] {
  return view.sections.flatMap((s) => [...s.buttons, ...s.groups.flatMap((g) => g.items.flatMap((i) => i.buttons))]);
}

/** Opens a modal with the click's trigger_id; a failure (an expired trigger) is logged. */
export async function openModal(deps: HomeDeps, c: { viewer: HomeViewer; trigger: string }, view: types.ModalView): Promise<void> {
  try {
    await deps.client.views.open({ trigger_id: c.trigger, view });
    deps.log.info({ user: c.viewer.user, callback: view.callback_id ?? null }, "home modal opened");
  } catch (err) {
    deps.log.warn({ user: c.viewer.user, error: slackErrorCode(err) }, "could not open a modal for a home click");
  }
}
