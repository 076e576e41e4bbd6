/**
 * What cairn knows, as a person may see it: a platform-neutral view (Slack's App Home, Discord's
 * embeds, a text answer on any platform), built by the core (build.ts) and drawn by each adapter.
 *
 * Every button is a command line: a click runs `CorePort.command(clicker, command, args)` exactly as
 * if the clicker had typed `/cairn <command> <args>`, so a button can do nothing its command would
 * not let that person do (same permission checks, same revisions), and an adapter needs to know no
 * action but "run this command". Navigation (another page of a group) asks for the view again.
 */
import type { CommandName } from "./commands.ts";

/** Which view: everything (Slack's Home tab), or one part of it (Discord's `/cairn me|team|skills`). */
export type Pane = "home" | "me" | "team" | "skills";
export const PANES: readonly Pane[] = ["home", "me", "team", "skills"];

export interface ViewRequest {
  pane: Pane;
  /** Page (0-based) of each group, by group id; absent: the first. */
  pages?: Readonly<Record<string, number>>;
  /** Items per page of a group (default DEFAULT_PAGE_SIZE). */
  pageSize?: number;
  /**
   * The platform channels the viewer can read now: whose channel lessons and proposals they see.
   * Absent: the channel the request came from (none from a DM).
   */
  channels?: readonly string[];
}

export const DEFAULT_PAGE_SIZE = 5;

export interface TeamView {
  pane: Pane;
  /** The viewer is a cairn admin (the view shows admin buttons). */
  admin: boolean;
  sections: ViewSection[];
}

export type SectionId = "you" | "team" | "skills" | "week";

export interface ViewSection {
  id: SectionId;
  /** Plain text. */
  title: string;
  /** Markdown lines shown under the title (counts, the persona, the week's numbers). */
  lines: string[];
  /** Buttons for the section as a whole (Forget me, Edit persona). */
  buttons: ViewButton[];
  groups: ViewGroup[];
}

export interface ViewGroup {
  /** Stable id, used in `ViewRequest.pages`. */
  id: string;
  /** Plain text. */
  title: string;
  /** This page's items. */
  items: ViewItem[];
  /** Items in the group in all. */
  total: number;
  page: number;
  /** Pages in all (at least 1). */
  pages: number;
  /** Markdown shown when the group is empty. */
  empty: string;
}

export interface ViewItem {
  /** The entry's or skill's id. */
  id: string;
  /** Markdown: the item as one short paragraph. */
  markdown: string;
  buttons: ViewButton[];
}

export interface ViewButton {
  /** Plain text, short (Slack: 75 characters; Discord: 80). */
  label: string;
  command: CommandName;
  args: readonly string[];
  style?: "primary" | "danger";
  /** Asked before the command runs (Slack's confirmation dialog). Plain text. */
  confirm?: { title: string; text: string; yes: string; no: string };
  /**
   * A second, explicit step: the command's answer is shown with this button, which runs the next
   * command (forget me -> forget me confirm).
   */
  next?: ViewButton;
  /**
   * The command takes text the person types: the platform asks for it (a modal) and adds it as the
   * last argument.
   */
  input?: { title: string; label: string; initial: string; maxLength: number; multiline: boolean };
}
