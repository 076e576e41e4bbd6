/**
 * The core's view (src/views/model.ts) as a Slack Home tab, in Block Kit. Pure: the same view and
 * state give the same blocks, so it is unit-tested without Slack.
 *
 * Layout: a header per section, the section's lines as one mrkdwn section, its buttons (Forget me,
 * Edit persona) in an actions block; per group a title line (with its page and count), then each
 * item as a section with its button as the accessory, or with an actions block after it when it has
 * two or more; a group with more pages ends with Previous / Show more buttons.
 *
 * Every button's `value` is its command line ("forget 123", "pin deploy"): a click runs exactly that
 * command as the clicker (actions.ts), so the blocks grant nothing the command would not. The
 * action_id says how the click is handled (run it, run it and offer the next step, ask for text
 * first, or turn the page), with a counter that keeps it unique in the view as Slack requires.
 *
 * Slack's limits are respected here, where the blocks are made: text is clipped to what each field
 * takes, and a view of more than 100 blocks is reported (`fits: false`) so the caller builds it
 * again with smaller pages, which keeps every item reachable by paging; only past one item per page
 * (`cut`) are items left out, and never the pagination buttons.
 */
import type { types } from "@slack/bolt";
import type { TeamView, ViewButton, ViewGroup, ViewItem, ViewSection } from "../../../ground/view-model.ts";
import { withinLimit } from "../../../ground/text.ts";
import type { SlackBlock } from "../client.ts";
import { escapeText, toMrkdwn } from "../mrkdwn.ts";
import { encodeState, type HomeState } from "./state.ts";

/** What Slack refuses beyond, in a Home view and its elements. */
export const HOME_LIMITS = {
  blocks: 100,
  sectionText: 3000,
  headerText: 150,
  buttonText: 75,
  actionId: 255,
  blockId: 255,
  value: 2000,
  actionsElements: 25,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  contextText: 3000,
} as const;

/** How a click on a Home button is handled, by the prefix of its action_id. */
export const HOME_ACTIONS = { command: "cairn_cmd", next: "cairn_next", input: "cairn_input", page: "cairn_page" } as const;
export type HomeActionKind = keyof typeof HOME_ACTIONS;
/** Every action_id the Home view uses: the adapter routes these clicks to the Home's listener. */
export const HOME_ACTION_ID = /^cairn_(cmd|next|input|page):\d+$/;

export function actionKind(actionId: string): HomeActionKind | null {
  const prefix = actionId.slice(0, actionId.indexOf(":"));
  const found = (Object.keys(HOME_ACTIONS) as HomeActionKind[]).find((k) => HOME_ACTIONS[k] === prefix);
  return found && HOME_ACTION_ID.test(actionId) ? found : null;
}

/** A button's command line, as `/cairn` takes it after its name. */
export const commandLine = (b: Pick<ViewButton, "command" | "args">): string => [b.command, ...b.args].join(" ");

/** A pagination button's value: which group, which page. */
export const pageValue = (group: string, page: number): string => `${group}:${page}`;
export function parsePageValue(value: string): { group: string; page: number } | null {
  const m = /^(.+):(\d{1,7})$/.exec(value);
  return m ? { group: m[1]!, page: Number(m[2]) } : null;
}

/** An item's blocks: its section (`item:<n>:<group>:<id>`) and its buttons' actions block, if any. */
const ITEM_BLOCK = /^item(-actions)?:/;

export const PREVIOUS_LABEL = "Previous";
export const MORE_LABEL = "Show more";

/** Shown to someone the core gives an empty view (not allowed to use cairn). */
export const NOT_ENABLED = "cairn isn't enabled for you here. Ask a cairn admin to add you.";

export interface RenderedHome {
  view: types.HomeView;
  /** Blocks in the view. */
  blocks: number;
  /** Within Slack's 100 blocks; false: build the view again with smaller pages. */
  fits: boolean;
}

/**
 * The Home view of `view`. `size` is the page size the view was built with (kept in the metadata
 * with each group's page); `notice`, in mrkdwn, is shown on top (the answer to the last click).
 */
export function homeView(view: TeamView, size: number, notice?: string, opts: { cut?: boolean } = {}): RenderedHome {
  let counter = 0;
  const next = (): number => counter++;
  const blocks: SlackBlock[] = [];
  if (notice?.trim()) blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: clipMrkdwn(notice, HOME_LIMITS.contextText) }] });
  if (view.sections.length === 0) blocks.push(section(escapeText(NOT_ENABLED)));
  view.sections.forEach((s, i) => {
    if (i > 0) blocks.push({ type: "divider" });
    blocks.push(...sectionBlocks(s, next));
  });
  // The last resort, for a view too big even at one item per page (the core's never is): items go,
  // last group first; headers, group titles and pagination stay, so paging still reaches them.
  if (opts.cut) {
    for (let i = blocks.length - 1; i >= 0 && blocks.length > HOME_LIMITS.blocks; i--) {
      if (ITEM_BLOCK.test(blocks[i]!.block_id ?? "")) blocks.splice(i, 1);
    }
    blocks.splice(HOME_LIMITS.blocks);
  }
  const state: HomeState = { size, pages: Object.fromEntries(view.sections.flatMap((s) => s.groups).map((g) => [g.id, g.page])) };
  return {
    view: { type: "home", blocks, private_metadata: encodeState(state) },
    blocks: blocks.length,
    fits: blocks.length <= HOME_LIMITS.blocks,
  };
}

function sectionBlocks(s: ViewSection, next: () => number): SlackBlock[] {
  const out: SlackBlock[] = [{ type: "header", text: plain(s.title, HOME_LIMITS.headerText) }];
  if (s.lines.length) out.push(section(toMrkdwn(s.lines.join("\n"))));
  out.push(...actions(`section:${s.id}`, s.buttons, next));
  for (const g of s.groups) out.push(...groupBlocks(g, next));
  return out;
}

function groupBlocks(g: ViewGroup, next: () => number): SlackBlock[] {
  const count = g.pages > 1 ? `  (page ${g.page + 1} of ${g.pages}, ${g.total} in all)` : g.total ? `  (${g.total})` : "";
  const title = `*${escapeText(g.title)}*${count}`;
  const out: SlackBlock[] = [section(g.items.length === 0 && g.empty ? `${title}\n${toMrkdwn(g.empty)}` : title, `group:${g.id}`)];
  for (const item of g.items) out.push(...itemBlocks(g, item, next));
  if (g.pages > 1) {
    const nav: types.Button[] = [];
    if (g.page > 0) nav.push({ type: "button", action_id: `${HOME_ACTIONS.page}:${next()}`, text: plain(PREVIOUS_LABEL), value: pageValue(g.id, g.page - 1) });
    if (g.page < g.pages - 1) nav.push({ type: "button", action_id: `${HOME_ACTIONS.page}:${next()}`, text: plain(MORE_LABEL), value: pageValue(g.id, g.page + 1) });
    out.push({ type: "actions", block_id: clip(`nav:${g.id}`, HOME_LIMITS.blockId), elements: nav });
  }
  return out;
}

function itemBlocks(g: ViewGroup, item: ViewItem, next: () => number): SlackBlock[] {
  const n = next();
  const blockId = clip(`item:${n}:${g.id}:${item.id}`, HOME_LIMITS.blockId);
  const text = toMrkdwn(item.markdown) || " ";
  const buttons = item.buttons.flatMap((b) => button(b, next) ?? []);
  if (buttons.length === 1) return [{ ...section(text, blockId), accessory: buttons[0]! }];
  return [section(text, blockId), ...actionsOf(clip(`item-actions:${n}:${g.id}:${item.id}`, HOME_LIMITS.blockId), buttons)];
}

function actions(blockId: string, buttons: readonly ViewButton[], next: () => number): SlackBlock[] {
  return actionsOf(blockId, buttons.flatMap((b) => button(b, next) ?? []));
}

/** Buttons in actions blocks of at most 25 elements; none for no buttons. */
function actionsOf(blockId: string, buttons: types.Button[]): SlackBlock[] {
  const out: SlackBlock[] = [];
  for (let i = 0; i < buttons.length; i += HOME_LIMITS.actionsElements) {
    const id = i === 0 ? blockId : `${blockId}:${i}`;
    out.push({ type: "actions", block_id: clip(id, HOME_LIMITS.blockId), elements: buttons.slice(i, i + HOME_LIMITS.actionsElements) });
  }
  return out;
}

/** A view button as a Block Kit button; null when its command line is longer than a value takes (none is). */
function button(b: ViewButton, next: () => number): types.Button | null {
  const value = commandLine(b);
  if (value.length > HOME_LIMITS.value) return null;
  const kind: HomeActionKind = b.input ? "input" : b.next ? "next" : "command";
  return {
    type: "button",
    action_id: `${HOME_ACTIONS[kind]}:${next()}`,
    text: plain(b.label, HOME_LIMITS.buttonText),
    value,
    ...(b.style ? { style: b.style } : {}),
    ...(b.confirm
      ? {
          confirm: {
            title: plain(b.confirm.title, HOME_LIMITS.confirmTitle),
            text: plain(b.confirm.text, HOME_LIMITS.confirmText),
            confirm: plain(b.confirm.yes, HOME_LIMITS.confirmButton),
            deny: plain(b.confirm.no, HOME_LIMITS.confirmButton),
            ...(b.style === "danger" ? { style: "danger" as const } : {}),
          },
        }
      : {}),
  };
}

export function section(mrkdwn: string, blockId?: string): types.SectionBlock {
  return { type: "section", ...(blockId ? { block_id: blockId } : {}), text: { type: "mrkdwn", text: clipMrkdwn(mrkdwn || " ", HOME_LIMITS.sectionText) } };
}

export function plain(text: string, max: number = HOME_LIMITS.buttonText): types.PlainTextElement {
  return { type: "plain_text", text: clip(text.trim() || "…", max), emoji: true };
}

/** Cut to `max` characters with an ellipsis (never inside a surrogate pair). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${withinLimit(text, max - 1).text.trimEnd()}…`;
}

/** As `clip`, and never inside an escape (`&amp;`) or a Slack sequence (`<#C1>`, `<url|label>`). */
export function clipMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = withinLimit(text, max - 1).text;
  const open = cut.lastIndexOf("<");
  if (open > cut.lastIndexOf(">")) cut = cut.slice(0, open);
  const amp = cut.lastIndexOf("&");
  if (amp > cut.lastIndexOf(";") && cut.length - amp <= 5) cut = cut.slice(0, amp);
  return `${cut.trimEnd()}…`;
}
