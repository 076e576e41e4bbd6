/**
 * `/cairn me|team|skills` on Discord: the core's view (src/views/) drawn as embeds and buttons
 * (message.ts), ephemeral (flag 64): each view is the asker's own, with their own buttons.
 *
 * Every button is a command line (ids.ts), run as the person who clicked, in the guild and
 * channel where they did, exactly as `/cairn <command> <args>` would run: same permission checks,
 * same revisions. What a click answers:
 * - prev/next: the same message, redrawn at that page (UPDATE_MESSAGE).
 * - a command: the same message redrawn as the view is now, then the command's answer ephemerally
 *   (a follow-up), so the person sees both what happened (or why not) and the view after it.
 * - a first step (Forget me): the command's answer ephemerally, with one danger button for the next
 *   step (Erase everything), whose answer then replaces that message.
 * - a command that takes text (Edit persona): a modal (modal.ts), whose submission runs the command
 *   with the text and redraws the view.
 * - a button on one of cairn's posts (a report's Approve, Roll back): the command's answer, ephemerally;
 *   the post is left as it is, for everyone else to act on.
 * Discord wants an answer within 3 seconds: work slower than `deferAfterMs` is deferred first
 * (../commands/deferral.ts), then answered when done; a modal cannot be deferred, so a lookup that slow is told
 * to type the command instead.
 */
import {
  ComponentType,
  MessageFlags,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type InteractionEditReplyOptions,
  type InteractionReplyOptions,
  type InteractionUpdateOptions,
  type ModalSubmitInteraction,
} from "discord.js";
import type { CorePort } from "../../../ground/adapter.ts";
import { VIEW_FAILED_REPLY } from "../../../ground/replies.ts";
import type { TeamView, ViewButton, ViewRequest } from "../../../ground/view-model.ts";
import type { Logger } from "../../../ground/log.ts";
import { answerInTime, FirstAnswer, within } from "../commands/deferral.ts";
import { interactionInbound, type ChannelInteraction } from "../commands/inbound.ts";
import { answerId, callOf, commandLine, parseCustomId, runId, type CommandCall, type DiscordPane, type ViewState } from "./ids.ts";
import { button, PAGE_SIZES, typedCommand, viewMessage, type ButtonRow, type ViewMessage } from "./message.ts";
import { inputModal, submittedText } from "./modal.ts";

export interface ViewDeps {
  core: CorePort;
  log: Logger;
  deferAfterMs: number;
}

const NO_MENTIONS = { parse: [] };
const EPHEMERAL = MessageFlags.Ephemeral;

/** A view message, or a text in its place (a refusal, a failure). */
interface Body extends ViewMessage {
  content: string;
}

/** What a click or a submission answers with when it updates the message it came from. */
interface Updates extends ChannelInteraction {
  reply(options: InteractionReplyOptions): Promise<unknown>;
  deferReply(options: { flags: MessageFlags.Ephemeral }): Promise<unknown>;
  update(options: InteractionUpdateOptions): Promise<unknown>;
  deferUpdate(): Promise<unknown>;
  editReply(options: InteractionEditReplyOptions): Promise<unknown>;
  followUp(options: InteractionReplyOptions): Promise<unknown>;
}

const replyOf = (body: Body): InteractionReplyOptions => ({ ...(body.content ? { content: body.content } : {}), embeds: body.embeds, components: body.components, allowedMentions: NO_MENTIONS });
const editOf = (body: Body): InteractionEditReplyOptions => ({ content: body.content, embeds: body.embeds, components: body.components, allowedMentions: NO_MENTIONS });
const textBody = (content: string): Body => ({ content, embeds: [], components: [] });

function requestFor(interaction: ChannelInteraction, state: ViewState): ViewRequest {
  // The channel lessons shown are the channel's where the view is asked for (none in a DM).
  return { pane: state.pane, pages: state.pages, pageSize: PAGE_SIZES[state.pane], channels: interaction.guildId ? [interaction.channelId] : [] };
}

/** The view as the interacting person may see it now; someone refused (an empty view) gets the command's own answer. */
async function draw(interaction: ChannelInteraction, state: ViewState, deps: ViewDeps): Promise<Body> {
  const inbound = interactionInbound(interaction, state.pane);
  const view = await deps.core.view(inbound, requestFor(interaction, state));
  if (view.sections.length === 0) return textBody((await deps.core.command(inbound, state.pane)).text);
  return { content: "", ...viewMessage(view, state) };
}

/** `draw`, or null when it failed (logged): a message is then left as it was. */
const drawSafely = (interaction: ChannelInteraction, state: ViewState, deps: ViewDeps): Promise<Body | null> =>
  draw(interaction, state, deps).catch((err: unknown) => {
    deps.log.error({ err, pane: state.pane }, "view failed");
    return null;
  });

/**
 * Has the core run the command as the clicker and show its answer (`CorePort.answer`), privately:
 * a view is its asker's own. `first` shows the first part (each flow its way); the rest follow up.
 */
async function run(interaction: ChannelInteraction & Pick<Updates, "followUp">, call: CommandCall, deps: ViewDeps, first: (text: string) => Promise<unknown>): Promise<void> {
  let shown = false;
  const send = async (text: string): Promise<void> => {
    if (shown) return void (await interaction.followUp({ content: text, flags: EPHEMERAL, allowedMentions: NO_MENTIONS }));
    shown = true;
    await first(text);
  };
  const answered = await deps.core.answer(interactionInbound(interaction, call.name, call.args), call, { private: { send } });
  deps.log.info({ command: call.name, user: interaction.user.id, failed: answered.failed }, "view button ran a command");
}

/** `/cairn me|team|skills`: the first page of the view, ephemerally. */
export async function answerView(interaction: ChatInputCommandInteraction, pane: DiscordPane, deps: ViewDeps): Promise<void> {
  const work = drawSafely(interaction, { pane, pages: {} }, deps).then((body) => body ?? textBody(VIEW_FAILED_REPLY));
  await answerInTime(work, deps.deferAfterMs, {
    now: async (body) => void (await interaction.reply({ ...replyOf(body), flags: EPHEMERAL })),
    defer: async () => void (await interaction.deferReply({ flags: EPHEMERAL })),
    later: async (body) => void (await interaction.editReply(editOf(body))),
  });
}

/** A click on one of cairn's buttons; false when the custom id is not one cairn made (nothing was answered). */
export async function handleViewButton(interaction: ButtonInteraction & ChannelInteraction, deps: ViewDeps): Promise<boolean> {
  const action = parseCustomId(interaction.customId);
  if (!action || action.kind === "submit") return false;
  switch (action.kind) {
    case "page":
      await redraw(interaction, action.state, deps);
      return true;
    case "run":
      await runAndRedraw(interaction, action.state, action.call, deps);
      return true;
    case "step":
      await firstStep(interaction, action.state, action.call, deps);
      return true;
    case "ask":
      await ask(interaction, action.state, action.call, deps);
      return true;
    case "answer":
      await nextStep(interaction, action.call, deps);
      return true;
    case "post":
      await answerPost(interaction, action.call, deps);
      return true;
  }
}

/** A button on one of cairn's posts (a report, a reminder): its command as the clicker, answered to them alone; the post stays as it is. */
async function answerPost(interaction: ChannelInteraction & Pick<Updates, "reply" | "deferReply" | "editReply" | "followUp">, call: CommandCall, deps: ViewDeps): Promise<void> {
  const first = new FirstAnswer(() => interaction.deferReply({ flags: EPHEMERAL }), deps.deferAfterMs);
  try {
    await run(interaction, call, deps, (content) =>
      first.answer<unknown>(
        () => interaction.reply({ content, flags: EPHEMERAL, allowedMentions: NO_MENTIONS }),
        () => interaction.editReply({ content, allowedMentions: NO_MENTIONS }),
      ),
    );
  } finally {
    first.close();
  }
}

/** A modal's submission; false when it is not one of cairn's (nothing was answered). */
export async function handleViewModal(interaction: ModalSubmitInteraction & ChannelInteraction, deps: ViewDeps): Promise<boolean> {
  const action = parseCustomId(interaction.customId);
  const text = submittedText([...interaction.fields.fields.values()]);
  if (action?.kind !== "submit" || text === null) return false;
  const call: CommandCall = { name: action.call.name, args: [...action.call.args, text] };
  if (interaction.isFromMessage()) {
    await runAndRedraw(interaction, action.state, call, deps);
    return true;
  }
  // A modal not opened from a view message (none of cairn's are): the answer alone.
  await answerPost(interaction, call, deps);
  return true;
}

/** prev/next: the same message at the asked page. */
async function redraw(interaction: Updates, state: ViewState, deps: ViewDeps): Promise<void> {
  const work = drawSafely(interaction, state, deps).then((body) => ({ body }));
  await answerInTime(work, deps.deferAfterMs, {
    now: async ({ body }) => void (body ? await interaction.update(editOf(body)) : await interaction.reply({ content: VIEW_FAILED_REPLY, flags: EPHEMERAL })),
    defer: async () => void (await interaction.deferUpdate()),
    later: async ({ body }) => void (body ? await interaction.editReply(editOf(body)) : await interaction.followUp({ content: VIEW_FAILED_REPLY, flags: EPHEMERAL })),
  });
}

/** Runs the command, redraws the view as it is after it, then tells what happened. */
async function runAndRedraw(interaction: Updates, state: ViewState, call: CommandCall, deps: ViewDeps): Promise<void> {
  const first = new FirstAnswer(() => interaction.deferUpdate(), deps.deferAfterMs);
  // The view is redrawn once the command has run, before its answer is shown (or after, if none was).
  let redrawn: Promise<unknown> | null = null;
  const redraw = () =>
    (redrawn ??= drawSafely(interaction, state, deps).then((body) =>
      first.answer<unknown>(
        () => (body ? interaction.update(editOf(body)) : interaction.deferUpdate()),
        async () => (body ? interaction.editReply(editOf(body)) : undefined),
      ),
    ));
  try {
    await run(interaction, call, deps, async (content) => {
      await redraw();
      await interaction.followUp({ content, flags: EPHEMERAL, allowedMentions: NO_MENTIONS });
    });
    await redraw();
  } finally {
    first.close();
  }
}

/** The button in the view as the person sees it now (what it asks for, what comes next). */
function findButton(view: TeamView, call: CommandCall): ViewButton | undefined {
  const line = commandLine(call);
  const all = view.sections.flatMap((s) => [...s.buttons, ...s.groups.flatMap((g) => g.items.flatMap((i) => i.buttons))]);
  return all.find((b) => commandLine(callOf(b)) === line);
}

async function lookUp(interaction: ChannelInteraction, state: ViewState, call: CommandCall, deps: ViewDeps): Promise<ViewButton | undefined> {
  const view = await deps.core.view(interactionInbound(interaction, state.pane), requestFor(interaction, state));
  return findButton(view, call);
}

/** Forget me: its answer, with the button that takes the next step. */
async function firstStep(interaction: Updates, state: ViewState, call: CommandCall, deps: ViewDeps): Promise<void> {
  const first = new FirstAnswer(() => interaction.deferReply({ flags: EPHEMERAL }), deps.deferAfterMs);
  const answer = (content: string, next: ViewButton | undefined): { content: string; components: ButtonRow[] } => {
    const id = next ? answerId(callOf(next)) : null;
    if (!next) return { content, components: [] };
    if (!id) return { content: `${content}\n${next.label}: \`${typedCommand(next)}\``, components: [] };
    return { content, components: [{ type: ComponentType.ActionRow, components: [button(next.label, id, next.style ?? "danger")] }] };
  };
  try {
    const next = (await lookUp(interaction, state, call, deps).catch(() => undefined))?.next;
    await run(interaction, call, deps, (content) =>
      first.answer<unknown>(
        () => interaction.reply({ ...answer(content, next), flags: EPHEMERAL, allowedMentions: NO_MENTIONS }),
        () => interaction.editReply({ ...answer(content, next), allowedMentions: NO_MENTIONS }),
      ),
    );
  } finally {
    first.close();
  }
}

/** The next step's button: its command runs, and its answer replaces the message the button was on. */
async function nextStep(interaction: Updates, call: CommandCall, deps: ViewDeps): Promise<void> {
  const first = new FirstAnswer(() => interaction.deferUpdate(), deps.deferAfterMs);
  const replaced = (content: string): InteractionEditReplyOptions => ({ content, embeds: [], components: [], allowedMentions: NO_MENTIONS });
  try {
    await run(interaction, call, deps, (content) =>
      first.answer<unknown>(
        () => interaction.update(replaced(content)),
        () => interaction.editReply(replaced(content)),
      ),
    );
  } finally {
    first.close();
  }
}

/** Edit persona: the modal, if the view still offers the person this button; else what to type. */
async function ask(interaction: ButtonInteraction & ChannelInteraction, state: ViewState, call: CommandCall, deps: ViewDeps): Promise<void> {
  const lookup = lookUp(interaction, state, call, deps).then(
    (found) => ({ found }),
    (err: unknown) => {
      deps.log.error({ err, command: call.name }, "view lookup failed");
      return { found: undefined };
    },
  );
  const typed = `\`/cairn ${commandLine(call)} <text>\``;
  const fast = await within(lookup, deps.deferAfterMs);
  if (!fast) {
    // A modal must be the first answer, and Discord's 3 seconds are nearly gone.
    await interaction.deferReply({ flags: EPHEMERAL });
    await lookup;
    await interaction.editReply({ content: `That took me too long to open the form. Type ${typed} instead, or click again.`, allowedMentions: NO_MENTIONS });
    return;
  }
  const input = fast.found?.input;
  const modalId = runId("submit", state, call);
  const modal = input && modalId ? inputModal(modalId, input) : null;
  if (modal) {
    await interaction.showModal(modal);
    return;
  }
  const why = input ? "The text is longer than Discord's form holds (4,000 characters)." : "This button is no longer offered to you.";
  await interaction.reply({ content: `${why} The command is ${typed}.`, flags: EPHEMERAL, allowedMentions: NO_MENTIONS });
}
