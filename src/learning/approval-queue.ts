/**
 * The approval queue as people read it (issue 27): each waiting item (approval-store.ts) as one
 * Markdown line with how long it has waited and the command a person would type, and the buttons
 * that run those commands (a click runs the command as the clicker, with the clicker's rights).
 * Shared by the reminders in threads, the admins' daily digest and the weekly report, so the three
 * word an item the same way.
 */
import type { ViewButton } from "../ground/view-model.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import type { WaitingRow } from "./approval-store.ts";
import { proposalSummary } from "./skill-proposals.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const TEXT = 120;

/** "3 days", "5 hours", "under an hour": how long something has waited. */
export function ageText(ms: number): string {
  const n = (k: number, unit: string) => `${k} ${unit}${k === 1 ? "" : "s"}`;
  if (ms >= DAY_MS) return n(Math.floor(ms / DAY_MS), "day");
  if (ms >= HOUR_MS) return n(Math.floor(ms / HOUR_MS), "hour");
  return "under an hour";
}

/** Waited longer than `hours`. */
export const overdue = (row: Pick<WaitingRow, "since">, now: Date, hours: number): boolean => now.getTime() - row.since.getTime() > hours * HOUR_MS;

/** The id the item's commands take. */
export const idOf = (row: WaitingRow): string => (row.kind === "skill" ? row.proposal.id : row.entry.id);

/** How an item is worded: `quoteChannels` false leaves a channel's text out (the report, read beyond the channel). */
export interface Wording {
  quoteChannels?: boolean;
}

/** What the item is, in a few words and its text (a channel's: where it is, unless quoted). */
export function describe(row: WaitingRow, w: Wording = {}): string {
  const entry = row.kind === "skill" ? null : row.entry;
  const hidden = w.quoteChannels === false && entry?.scope === "channel";
  const q = (text: string) => (hidden ? `in <#${entry?.channelKey ?? "?"}>` : `"${excerpt(text, TEXT)}"`);
  switch (row.kind) {
    case "rule":
      return row.entry.kind === "rule" ? `Team rule ${q(row.entry.text)} (would replace a rule the team has now)` : `Lesson ${q(row.entry.text)} proposed as a team rule`;
    case "share":
      return `${row.entry.status === "held" ? "Held by the safety screen" : "Asked for the whole team"}: ${q(row.entry.text)}`;
    case "skill":
      return proposalSummary(row.proposal);
    case "conflict":
      return hidden ? `Conflict between two entries ${q(row.entry.text)}` : `Conflict: ${q(row.entry.text)} (new) vs ${q(row.other.text)} (old)`;
  }
}

/** The commands a person types to decide the item. */
export function commandsOf(row: WaitingRow): { label: string; command: ViewButton["command"]; args: string[]; style?: ViewButton["style"] }[] {
  const id = idOf(row);
  if (row.kind === "conflict") {
    return [
      { label: "Keep new", command: "keep", args: ["new", id], style: "primary" },
      { label: "Keep old", command: "keep", args: ["old", id] },
      { label: "Keep both", command: "keep", args: ["both", id] },
    ];
  }
  return [
    { label: "Approve", command: "approve", args: [id], style: "primary" },
    { label: "Reject", command: "reject", args: [id], style: "danger" },
  ];
}

/** "`/cairn approve x` · `/cairn reject x`": the Markdown that lists the typed commands (every platform shows it). */
export const typedCommands = (row: WaitingRow): string => commandsOf(row).map((c) => `\`/cairn ${[c.command, ...c.args].join(" ")}\``).join(" · ");

/** One line: what it is, how long it has waited, how to decide it. `n` numbers it for its buttons. */
export function queueLine(row: WaitingRow, now: Date, n?: number, w: Wording = {}): string {
  const num = n === undefined ? "" : `${n}. `;
  return `- ${num}${describe(row, w)}: waiting ${ageText(now.getTime() - row.since.getTime())} · ${typedCommands(row)}`;
}

/** The item's buttons, labelled with its number in the list ("Approve 2"). */
export function queueButtons(row: WaitingRow, n: number): ViewButton[] {
  return commandsOf(row).map((c) => ({
    label: `${c.label} ${n}`,
    command: c.command,
    args: c.args,
    ...(c.style ? { style: c.style } : {}),
    ...(c.command === "reject" ? { confirm: { title: "Reject this proposal?", text: excerpt(describe(row), 250), yes: "Reject", no: "Cancel" } } : {}),
  }));
}

/** Items shown with buttons in one post: a message holds only so many (Discord: 25 buttons in all). */
export const QUEUE_SHOWN = 6;

/** The queue as lines and buttons: the longest waiting first, at most `max` with buttons, the rest counted. */
export function queueSection(rows: readonly WaitingRow[], now: Date, max = QUEUE_SHOWN, w: Wording = {}): { lines: string[]; buttons: ViewButton[] } {
  const shown = rows.slice(0, max);
  const lines = shown.map((r, i) => queueLine(r, now, i + 1, w));
  if (rows.length > max) lines.push(`- …and ${rows.length - max} more (\`/cairn team\` lists them all)`);
  return { lines, buttons: shown.flatMap((r, i) => queueButtons(r, i + 1)) };
}
