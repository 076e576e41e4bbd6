/**
 * A view (src/views/model.ts) as one Discord message: embeds for the text, buttons for the actions.
 *
 * Layout: a section's lines (counts, the persona) in an embed of its own; each group in an embed,
 * its title saying which page this is; items numbered through the whole message, and each item's
 * buttons labelled with its number ("Delete 2"), since buttons sit under the embeds, not beside
 * their item. Then the section's buttons (Forget me, Edit persona), then prev/next for each group
 * with more than one page.
 *
 * Limits (Discord answers 400 beyond them): 10 embeds, 6,000 characters across them, 4,096 in a
 * description, 256 in a title; 5 rows of 5 buttons, 80 characters in a label, 100 in a custom id.
 * The page sizes (PAGE_SIZES) are chosen so a full page's buttons fit the 25; should they not, item
 * buttons are the ones left out (navigation is never), and a left-out button's command is shown in
 * the item's text to type, as it is for a button whose id would be too long. Text is fitted by
 * shortening long items, never by dropping one.
 */
import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponentWithCustomId, type APIEmbed } from "discord.js";
import type { TeamView, ViewButton, ViewGroup, ViewItem, ViewSection } from "../../../ground/view-model.ts";
import { withinLimit } from "../../../ground/text.ts";
import { EMBED_LIMITS, embedChars } from "../rich.ts";
import { COMPONENT_LIMITS } from "../limits.ts";
import { callOf, commandLine, pageId, runId, type DiscordPane, type RunKind, type ViewState } from "./ids.ts";

/**
 * Items per page of every group, per pane: the most buttons a full page can need stays within 25.
 * - me: 3 groups (profile, private lessons, waiting) x 5 items x 1 button + 3 x 2 prev/next + Forget me = 22.
 * - team: proposals 4 x 2 (Approve, Reject) + rules 4 x 1 + lessons 4 x 1 + memory 0 + 4 x 2 prev/next + Edit persona = 25.
 * - skills: 10 x 2 (Pin or Unpin, Archive) + prev/next = 22.
 */
export const PAGE_SIZES: Record<DiscordPane, number> = { me: 5, team: 4, skills: 10 };

export type ButtonRow = APIActionRowComponent<APIButtonComponentWithCustomId>;

export interface ViewMessage {
  embeds: APIEmbed[];
  components: ButtonRow[];
}

const MAX_BUTTONS = COMPONENT_LIMITS.rows * COMPONENT_LIMITS.buttonsPerRow;
/** Longest an item reads before the message is fitted; the persona line the same. */
const ITEM_CHARS = 400;
const LINES_CHARS = 1200;
/** Shortest an item is cut to when fitting: still recognisable. */
const MIN_ITEM_CHARS = 60;

/** Which custom id a button gets: a modal for text, a first step, or a plain run. */
export const runKindOf = (b: Pick<ViewButton, "input" | "next">): RunKind => (b.input ? "ask" : b.next ? "step" : "run");

/** A button's command as the person would type it (a modal's text as <text>). */
export const typedCommand = (b: ViewButton): string => `/cairn ${commandLine(callOf(b))}${b.input ? " <text>" : ""}`;

export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = withinLimit(text, Math.max(1, max - 1)).text;
  // At a word boundary where there is one near the end: a cut word (or mention) reads worse than a shorter line.
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.7 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const STYLE: Record<NonNullable<ViewButton["style"]> | "none", ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Danger> = {
  primary: ButtonStyle.Primary,
  danger: ButtonStyle.Danger,
  none: ButtonStyle.Secondary,
};

export function button(label: string, customId: string, style: ViewButton["style"]): APIButtonComponentWithCustomId {
  return { type: ComponentType.Button, style: STYLE[style ?? "none"], label: clip(label, COMPONENT_LIMITS.label), custom_id: customId };
}

interface Numbered {
  group: ViewGroup;
  item: ViewItem;
  n: number;
  /** Buttons not drawn: their commands are shown in the text. */
  typed: ViewButton[];
}

type Block = APIButtonComponentWithCustomId[];
type SectionTyped = ReadonlyMap<ViewSection, readonly ViewButton[]>;

export function viewMessage(view: TeamView, state: ViewState): ViewMessage {
  const ids = new Set<string>();
  /** A button's id, once per message (Discord refuses a repeated custom id). */
  const unique = (id: string | null): string | null => {
    if (id === null || ids.has(id)) return null;
    ids.add(id);
    return id;
  };

  const numbered: Numbered[] = [];
  const itemButtons: { button: APIButtonComponentWithCustomId; owner: Numbered; source: ViewButton }[] = [];
  const sectionButtons: { button: APIButtonComponentWithCustomId; section: ViewSection; source: ViewButton }[] = [];
  const sectionTyped = new Map<ViewSection, ViewButton[]>(view.sections.map((s) => [s, []]));
  const nav: Block = [];
  let n = 0;
  for (const section of view.sections) {
    for (const group of section.groups) {
      for (const item of group.items) {
        const entry: Numbered = { group, item, n: ++n, typed: [] };
        numbered.push(entry);
        for (const b of item.buttons) {
          const id = unique(runId(runKindOf(b), state, callOf(b)));
          if (id) itemButtons.push({ button: button(`${b.label} ${entry.n}`, id, b.style), owner: entry, source: b });
          else entry.typed.push(b);
        }
      }
      if (group.pages > 1) {
        const to = (page: number): ViewState => ({ pane: state.pane, pages: { ...state.pages, [group.id]: page } });
        const prev = group.page > 0 ? unique(pageId(to(group.page - 1))) : null;
        const next = group.page < group.pages - 1 ? unique(pageId(to(group.page + 1))) : null;
        if (prev) nav.push(button(`◀ ${clip(group.title, 40)}: page ${group.page}`, prev, undefined));
        if (next) nav.push(button(`${clip(group.title, 40)}: page ${group.page + 2} ▶`, next, undefined));
      }
    }
    for (const b of section.buttons) {
      const id = unique(runId(runKindOf(b), state, callOf(b)));
      if (id) sectionButtons.push({ button: button(b.label, id, b.style), section, source: b });
      else sectionTyped.get(section)?.push(b);
    }
  }

  // Within the 25: navigation first (without it the other pages cannot be reached), then the
  // section's buttons, then items' in order; an item button left out is typed instead.
  const navKept = nav.slice(0, MAX_BUTTONS);
  const sectionRoom = MAX_BUTTONS - navKept.length;
  for (const left of sectionButtons.slice(sectionRoom)) sectionTyped.get(left.section)?.push(left.source);
  const sectionKept = sectionButtons.slice(0, sectionRoom).map((b) => b.button);
  const itemRoom = sectionRoom - sectionKept.length;
  for (const left of itemButtons.slice(itemRoom)) left.owner.typed.push(left.source);
  const itemKept = itemButtons.slice(0, itemRoom).map((b) => b.button);
  const components = rows([itemKept, sectionKept, navKept]);

  return { embeds: fitEmbeds(view, numbered, sectionTyped), components };
}

/** Each block on rows of its own when that fits in 5 rows; else all packed, 5 to a row. */
function rows(blocks: readonly Block[]): ButtonRow[] {
  const chunk = (buttons: Block): Block[] => Array.from({ length: Math.ceil(buttons.length / COMPONENT_LIMITS.buttonsPerRow) }, (_, i) => buttons.slice(i * COMPONENT_LIMITS.buttonsPerRow, (i + 1) * COMPONENT_LIMITS.buttonsPerRow));
  const apart = blocks.flatMap((b) => chunk(b));
  const chosen = apart.length <= COMPONENT_LIMITS.rows ? apart : chunk(blocks.flat()).slice(0, COMPONENT_LIMITS.rows);
  return chosen.map((components) => ({ type: ComponentType.ActionRow, components }));
}

const typedText = (typed: readonly ViewButton[]): string => typed.map((b) => ` · ${b.label}: \`${typedCommand(b)}\``).join("");

function groupTitle(g: ViewGroup): string {
  const more = g.pages > 1 ? ` · page ${g.page + 1} of ${g.pages} (${g.total} in all)` : g.total ? ` (${g.total})` : "";
  return clip(`${g.title}${more}`, EMBED_LIMITS.title);
}

/** The embeds with items cut to `itemChars` and section lines to `linesChars`. */
function embedsAt(view: TeamView, numbered: readonly Numbered[], sectionTyped: SectionTyped, itemChars: number, linesChars: number): APIEmbed[] {
  const embeds: APIEmbed[] = [];
  for (const section of view.sections) {
    const lines = [clip(section.lines.join("\n"), linesChars), typedText(sectionTyped.get(section) ?? []).replace(/^ · /, "")].filter(Boolean).join("\n");
    if (lines) embeds.push({ title: clip(section.title, EMBED_LIMITS.title), description: lines });
    for (const group of section.groups) {
      const items = numbered.filter((x) => x.group === group);
      const body = items.length ? items.map((x) => `**${x.n}.** ${clip(x.item.markdown, itemChars)}${typedText(x.typed)}`).join("\n") : group.empty;
      embeds.push({ title: groupTitle(group), ...(body.trim() ? { description: body } : {}) });
    }
  }
  return embeds;
}

const fits = (embeds: readonly APIEmbed[]): boolean =>
  embeds.length <= EMBED_LIMITS.embeds && embedChars(embeds) <= EMBED_LIMITS.total && embeds.every((e) => (e.description ?? "").length <= EMBED_LIMITS.description);

/** The longest items that fit the message's limits; at the shortest, descriptions are cut to their share. */
function fitEmbeds(view: TeamView, numbered: readonly Numbered[], sectionTyped: SectionTyped): APIEmbed[] {
  for (let chars = ITEM_CHARS; chars >= MIN_ITEM_CHARS; chars = Math.floor(chars * 0.8)) {
    const embeds = embedsAt(view, numbered, sectionTyped, chars, Math.max(200, Math.round((LINES_CHARS * chars) / ITEM_CHARS)));
    if (fits(embeds)) return embeds;
  }
  // Not reached with the page sizes above; a safety net that keeps the message postable.
  const embeds = embedsAt(view, numbered, sectionTyped, MIN_ITEM_CHARS, 200).slice(0, EMBED_LIMITS.embeds);
  const titles = embeds.reduce((sum, e) => sum + (e.title ?? "").length, 0);
  const share = Math.max(1, Math.floor((EMBED_LIMITS.total - titles) / embeds.length));
  return embeds.map((e) => (e.description ? { ...e, description: clip(e.description, Math.min(share, EMBED_LIMITS.description)) } : e));
}
