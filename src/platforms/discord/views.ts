/**
 * `/cairn me|team|skills` on Discord: the core's view (src/views/) drawn as embeds and buttons
 * (view-message.ts), ephemeral (flag 64): each view is the asker's own, with their own buttons.
 *
 * Every button is a command line (view-ids.ts), run as the person who clicked, in the guild and
 * channel where they did, exactly as `/cairn <command> <args>` would run: same permission checks,
 * same revisions. What a click answers:
 * - prev/next: the same message, redrawn at that page (UPDATE_MESSAGE).
 * - a command: the same message redrawn as the view is now, then the command's answer ephemerally
 *   (a follow-up), so the person sees both what happened (or why not) and the view after it.
 * - a first step (Forget me): the command's answer ephemerally, with one danger button for the next
 *   step (Erase everything), whose answer then replaces that message.
 * - a command that takes text (Edit persona): a modal (view-modal.ts), whose submission runs the command
 *   with the text and redraws the view.
 * Discord wants an answer within 3 seconds: work slower than `deferAfterMs` is deferred first
 * (deferral.ts), then answered when done; a modal cannot be deferred, so a lookup that slow is told
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
import type { CorePort } from "../../ground/adapter.ts";
import type { CommandReply } from "../../ground/commands.ts";
import type { TeamView, ViewButton, ViewRequest } from "../../ground/view-model.ts";
import type { Logger } from "../../ground/log.ts";
import { answerInTime, within } from "./deferral.ts";
import { interactionInbound, type ChannelInteraction } from "./interaction-inbound.ts";
import { COMMAND_FAILED_REPLY, followUps, partsOf } from "./reply-parts.ts";
import { answerId, callOf, commandLine, parseCustomId, runId, type CommandCall, type DiscordPane, type ViewState } from "./view-ids.ts";
import { button, PAGE_SIZES, typedCommand, viewMessage, type ButtonRow, type ViewMessage } from "./view-message.ts";
import { inputModal, submittedText } from "./view-modal.ts";

export interface ViewDeps {
  core: CorePort;
  log: Logger;
  deferAfterMs: number;
}

const VIEW_FAILED_REPLY = "Sorry, something went wrong on my side while drawing that view. Please try again.";
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

/** The command as the clicker; a failure is an apology, not a silence. */
async function run(interaction: ChannelInteraction, call: CommandCall, deps: ViewDeps): Promise<CommandReply> {
  try {
    const reply = await deps.core.command(interactionInbound(interaction, call.name, call.args), call.name, call.args);
    deps.log.info({ command: call.name, outcome: reply.outcome ?? null, user: interaction.user.id }, "view button ran a command");
    return reply;
  } catch (err) {
    deps.log.error({ err, command: call.name }, "command failed");
    return { text: COMMAND_FAILED_REPLY, ephemeral: true };
  }
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
  const work = run(interaction, call, deps);
  await answerInTime(work, deps.deferAfterMs, {
    now: async (reply) => void (await interaction.reply({ content: partsOf(reply.text)[0], flags: EPHEMERAL, allowedMentions: NO_MENTIONS })),
    defer: async () => void (await interaction.deferReply({ flags: EPHEMERAL })),
    later: async (reply) => void (await interaction.editReply({ content: partsOf(reply.text)[0], allowedMentions: NO_MENTIONS })),
  });
  await followUps(interaction, partsOf((await work).text).slice(1), EPHEMERAL, deps.log);
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
  const work = (async () => {
    const reply = await run(interaction, call, deps);
    return { reply, body: await drawSafely(interaction, state, deps) };
  })();
  await answerInTime(work, deps.deferAfterMs, {
    now: async ({ body }) => void (body ? await interaction.update(editOf(body)) : await interaction.deferUpdate()),
    defer: async () => void (await interaction.deferUpdate()),
    later: async ({ body }) => void (body ? await interaction.editReply(editOf(body)) : undefined),
  });
  await followUps(interaction, partsOf((await work).reply.text), EPHEMERAL, deps.log);
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
  const work = (async () => {
    const next = (await lookUp(interaction, state, call, deps).catch(() => undefined))?.next;
    return { reply: await run(interaction, call, deps), next };
  })();
  const answer = ({ reply, next }: Awaited<typeof work>): { content: string; components: ButtonRow[] } => {
    const id = next ? answerId(callOf(next)) : null;
    const content = partsOf(reply.text)[0];
    if (!next) return { content, components: [] };
    if (!id) return { content: `${content}\n${next.label}: \`${typedCommand(next)}\``, components: [] };
    return { content, components: [{ type: ComponentType.ActionRow, components: [button(next.label, id, next.style ?? "danger")] }] };
  };
  await answerInTime(work, deps.deferAfterMs, {
    now: async (done) => void (await interaction.reply({ ...answer(done), flags: EPHEMERAL, allowedMentions: NO_MENTIONS })),
    defer: async () => void (await interaction.deferReply({ flags: EPHEMERAL })),
    later: async (done) => void (await interaction.editReply({ ...answer(done), allowedMentions: NO_MENTIONS })),
  });
  await followUps(interaction, partsOf((await work).reply.text).slice(1), EPHEMERAL, deps.log);
}

/** The next step's button: its command runs, and its answer replaces the message the button was on. */
async function nextStep(interaction: Updates, call: CommandCall, deps: ViewDeps): Promise<void> {
  const work = run(interaction, call, deps);
  const replaced = (reply: CommandReply): InteractionEditReplyOptions => ({ content: partsOf(reply.text)[0], embeds: [], components: [], allowedMentions: NO_MENTIONS });
  await answerInTime(work, deps.deferAfterMs, {
    now: async (reply) => void (await interaction.update(replaced(reply))),
    defer: async () => void (await interaction.deferUpdate()),
    later: async (reply) => void (await interaction.editReply(replaced(reply))),
  });
  await followUps(interaction, partsOf((await work).text).slice(1), EPHEMERAL, deps.log);
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
