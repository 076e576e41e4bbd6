/**
 * The custom ids of cairn's view buttons and modals. Everything a click needs is in its id, so any
 * replica answers it, after any restart, with nothing kept between drawing a view and a click on it:
 *
 *   cairn:v:<pane>:<pages>                 draw the view at these pages (a prev/next button)
 *   cairn:c:<pane>:<pages>:<command line>  run the command, answer with its text, redraw the view
 *   cairn:s:<pane>:<pages>:<command line>  a first step: run it, answer with its text and the next step's button
 *   cairn:i:<pane>:<pages>:<command line>  ask for text in a modal (the command takes it as its last argument)
 *   cairn:m:<pane>:<pages>:<command line>  that modal's submission: run the command with the text, redraw the view
 *   cairn:x:<command line>                 a next step's button on an answer: run it; its answer replaces the message
 *   cairn:p:<command line>                 a button on one of cairn's posts (a report): run it, answer the clicker alone
 *
 * <pages> lists the groups not on their first page ("rules=1,skills=3"; empty when none), so a
 * redrawn view stays where the person was. The command line is what `/cairn` takes typed, and is
 * read back with `parseCommandLine`: a click can run only a command, with the clicker's rights.
 * Discord refuses a custom id over 100 characters: a button whose id would be longer is not drawn
 * (the view shows its command to type instead).
 */
import { z } from "zod";
import { parseCommandLine, type CommandCall, type CommandName } from "../../../ground/commands.ts";
import { COMPONENT_LIMITS } from "../limits.ts";

export const DISCORD_PANES = ["me", "team", "skills"] as const;
/** The views `/cairn me|team|skills` draw (the whole Home view is Slack's). */
export type DiscordPane = (typeof DISCORD_PANES)[number];

export interface ViewState {
  pane: DiscordPane;
  /** Page (0-based) of each group not on its first. */
  pages: Readonly<Record<string, number>>;
}

export type { CommandCall } from "../../../ground/commands.ts";

export type RunKind = "run" | "step" | "ask" | "submit";

export type ViewAction = { kind: "page"; state: ViewState } | { kind: RunKind; state: ViewState; call: CommandCall } | { kind: "answer" | "post"; call: CommandCall };

const PREFIX = "cairn";
const LETTER: Record<ViewAction["kind"], string> = { page: "v", run: "c", step: "s", ask: "i", submit: "m", answer: "x", post: "p" };
const KIND_OF: Record<string, ViewAction["kind"]> = Object.fromEntries(Object.entries(LETTER).map(([kind, letter]) => [letter, kind as ViewAction["kind"]]));

const GROUP = /^[a-z0-9-]{1,40}$/;
const MAX_PAGE = 9999;

/** `rules=1,skills=3`: groups past their first page, in a stable order (one state, one id). */
export function pagesText(pages: Readonly<Record<string, number>>): string {
  return Object.entries(pages)
    .filter(([group, page]) => GROUP.test(group) && Number.isInteger(page) && page > 0 && page <= MAX_PAGE)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([group, page]) => `${group}=${page}`)
    .join(",");
}

export const commandLine = (call: CommandCall): string => [call.name, ...call.args].join(" ");

/** A view button's command. */
export const callOf = (b: { command: CommandName; args: readonly string[] }): CommandCall => ({ name: b.command, args: b.args });

/** The id, or null when Discord would refuse it (too long) or the command would not read back the same. */
function checked(id: string, call?: CommandCall): string | null {
  if (id.length > COMPONENT_LIMITS.customId) return null;
  if (call) {
    const back = parseCommandLine(commandLine(call));
    if (!back || back.name !== call.name || back.args.length !== call.args.length || back.args.some((a, i) => a !== call.args[i])) return null;
  }
  return id;
}

export function pageId(state: ViewState): string | null {
  return checked(`${PREFIX}:${LETTER.page}:${state.pane}:${pagesText(state.pages)}`);
}

export function runId(kind: RunKind, state: ViewState, call: CommandCall): string | null {
  return checked(`${PREFIX}:${LETTER[kind]}:${state.pane}:${pagesText(state.pages)}:${commandLine(call)}`, call);
}

export function answerId(call: CommandCall): string | null {
  return checked(`${PREFIX}:${LETTER.answer}:${commandLine(call)}`, call);
}

/** A button on a post of cairn's own: null when Discord would refuse the id (its command is typed in the text). */
export function postId(call: CommandCall): string | null {
  return checked(`${PREFIX}:${LETTER.post}:${commandLine(call)}`, call);
}

/** A custom id as Discord sends it back: within its limit, one of cairn's. */
const CustomId = z
  .string()
  .min(1)
  .max(COMPONENT_LIMITS.customId)
  .regex(/^cairn:[vcsimxp]:/);
const Pane = z.enum(DISCORD_PANES);
const Pages = z
  .string()
  .regex(/^(?:[a-z0-9-]{1,40}=\d{1,4}(?:,[a-z0-9-]{1,40}=\d{1,4})*)?$/)
  .transform((text) => Object.fromEntries(text ? text.split(",").map((pair) => pair.split("=") as [string, string]).map(([group, page]) => [group, Number(page)]) : []));

/** What a click or submission asks for, or null for an id cairn did not make (or one tampered with). */
export function parseCustomId(raw: unknown): ViewAction | null {
  const id = CustomId.safeParse(raw);
  if (!id.success) return null;
  const kind = KIND_OF[id.data[6] ?? ""];
  const rest = id.data.slice(8);
  if (!kind) return null;
  if (kind === "answer" || kind === "post") {
    const call = parseCommandLine(rest);
    return call && rest.trim() ? { kind, call } : null;
  }
  const [paneText = "", pagesRaw = "", ...lineParts] = rest.split(":");
  const pane = Pane.safeParse(paneText);
  const pages = Pages.safeParse(pagesRaw);
  if (!pane.success || !pages.success) return null;
  const state: ViewState = { pane: pane.data, pages: pages.data };
  if (kind === "page") return lineParts.length === 0 ? { kind, state } : null;
  const line = lineParts.join(":");
  const call = line.trim() ? parseCommandLine(line) : null;
  return call ? { kind, state, call } : null;
}
