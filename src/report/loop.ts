/**
 * The report closes the loop (issue 27): what the curator did this week (each with its rollback),
 * which facts stopped holding and what replaced them, which conflicts people decided and how many
 * are open, what shared memory nobody confirmed for `verifyDays`, and everything waiting for
 * approval with its age. Dates and ages are read at the end of the report's week, so a report made
 * again for the same slot says the same of the same rows.
 *
 * Each section lists the command a person would type, and carries buttons that run it as the
 * clicker (ground/adapter.ts RichSection.buttons): the platform checks nothing, the command does.
 */
import type { WorkspaceScope } from "../ground/scope.ts";
import { parseCommand } from "../ground/commands.ts";
import type { ViewButton } from "../ground/view-model.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { dayOf, isDue, lastConfirmed } from "../memory/validity.ts";
import type { ApprovalStore, WaitingRow } from "../learning/approval-store.ts";
import { describe, idOf, queueSection } from "../learning/approval-queue.ts";
import type { Period } from "./metrics.ts";
import type { CuratorAction, DecidedConflict, ReportStore } from "./report-store.ts";
import type { ReportSection } from "./render.ts";

/** Items listed per section (the rest counted), and buttons per section: a Discord message holds 25 in all. */
export const LOOP_LISTED = 8;
export const LOOP_QUEUE = 5;
export const LOOP_BUTTONS = 3;

export interface LoopData {
  curator: (Omit<CuratorAction, "at"> & { at: string })[];
  superseded: { id: string; kind: string; text: string; channelKey: string | null; until: string; byId: string | null; byText: string | null }[];
  conflicts: { decided: (Omit<DecidedConflict, "at"> & { at: string })[]; open: number };
  /** Shared entries due for confirmation: how many, and the longest unconfirmed first. */
  due: { count: number; items: { id: string; scope: string; channelKey: string | null; kind: string; text: string; lastConfirmed: string }[] };
  /** Everything waiting at the week's end, the longest waiting first. */
  queue: { kind: WaitingRow["kind"]; id: string; what: string; since: string; waitingHours: number }[];
}

export interface Loop {
  data: LoopData;
  /** The queue's rows, for its lines and buttons. */
  waiting: WaitingRow[];
}

const HOUR_MS = 3_600_000;
/**
 * The report is read by the whole workspace: a channel's entries are named by where they are, not
 * quoted (as the rest of the report counts channel lessons without quoting them); team ones are quoted.
 */
const CHANNELS_UNQUOTED = { quoteChannels: false } as const;

export async function loopOfWeek(reports: ReportStore, approvals: ApprovalStore, scope: WorkspaceScope, period: Period, verifyDays: number): Promise<Loop> {
  const end = period.end;
  const [curator, superseded, decided, confirmable, all] = await Promise.all([
    reports.curatorActions(scope, period),
    reports.superseded(scope, period),
    reports.conflictsDecided(scope, period),
    reports.confirmable(scope),
    approvals.waiting(scope),
  ]);
  const due = confirmable
    .filter((e) => e.createdAt < end && isDue(e, end, verifyDays))
    .sort((a, b) => lastConfirmed(a).getTime() - lastConfirmed(b).getTime());
  const waiting = all.filter((r) => r.since < end);
  return {
    waiting,
    data: {
      curator: curator.map((c) => ({ ...c, at: c.at.toISOString() })),
      superseded: superseded.map((s) => ({ ...s, until: s.until.toISOString() })),
      conflicts: { decided: decided.map((d) => ({ ...d, at: d.at.toISOString() })), open: waiting.filter((r) => r.kind === "conflict").length },
      due: { count: due.length, items: due.slice(0, LOOP_LISTED).map((e) => ({ id: e.id, scope: e.scope, channelKey: e.channelKey, kind: e.kind, text: e.text, lastConfirmed: dayOf(lastConfirmed(e)) })) },
      queue: waiting.map((r) => ({ kind: r.kind, id: idOf(r), what: describe(r, CHANNELS_UNQUOTED), since: r.since.toISOString(), waitingHours: Math.floor((end.getTime() - r.since.getTime()) / HOUR_MS) })),
    },
  };
}

/** A team entry's text, quoted; a channel's named by its channel (CHANNELS_UNQUOTED). */
const q = (text: string, channelKey: string | null = null) => (channelKey ? `in <#${channelKey}>` : `"${excerpt(text, 120)}"`);
const typed = (command: string, ...args: string[]) => `\`/cairn ${[command, ...args].join(" ")}\``;
const more = (n: number, shown: number, where: string) => (n > shown ? [`- …and ${n - shown} more (${where})`] : []);

function curatorLine(c: LoopData["curator"][number]): string {
  const what = c.kind === "skill" ? `skill \`${c.name}\`` : `${c.kind} ${q(c.name, c.channelKey)}`;
  const done = c.action === "merge" ? `Merged into ${what}` : c.action === "create" ? `Made ${what} from merged skills` : `Archived ${what}`;
  const why = c.reason ? ` (${excerpt(c.reason, 100)})` : "";
  return `- ${done}${why} · undo: ${typed("rollback", c.revisionId)}`;
}

function curatorSection(d: LoopData): ReportSection | null {
  if (d.curator.length === 0) return null;
  const shown = d.curator.slice(0, LOOP_LISTED);
  const buttons: ViewButton[] = shown.slice(0, LOOP_BUTTONS).map((c, i) => ({ label: `Roll back ${i + 1}`, command: "rollback", args: [c.revisionId] }));
  return {
    heading: "What cairn tidied up",
    aside: "(its weekly clean-up of what it knows; admins can undo any of it)",
    lines: [...shown.map((c, i) => curatorLine(c).replace(/^- /, `- ${i + 1}. `)), ...more(d.curator.length, shown.length, "`/cairn history <item>` lists them")],
    buttons,
  };
}

const KEPT: Record<string, string> = { keep_new: "the newer one kept", keep_old: "the older one kept", keep_both: "both kept" };

function changedSection(d: LoopData): ReportSection | null {
  const { superseded, conflicts } = d;
  if (superseded.length === 0 && conflicts.decided.length === 0 && conflicts.open === 0) return null;
  const lines = superseded.slice(0, LOOP_LISTED).map((s) => `- A ${s.kind} ${q(s.text, s.channelKey)} no longer holds since ${s.until.slice(0, 10)}${s.byText && !s.channelKey ? `; now: ${q(s.byText)}` : ""}`);
  lines.push(...more(superseded.length, Math.min(superseded.length, LOOP_LISTED), "`/cairn history <entry>` shows each one's past"));
  for (const c of conflicts.decided.slice(0, LOOP_LISTED)) lines.push(`- Disagreement settled, ${KEPT[c.action] ?? c.action}: ${q(c.text, c.channelKey)} (${c.at.slice(0, 10)})`);
  lines.push(...more(conflicts.decided.length, Math.min(conflicts.decided.length, LOOP_LISTED), "`/cairn history <entry>` shows them"));
  if (conflicts.open) lines.push(`- ${conflicts.open} disagreement${conflicts.open === 1 ? "" : "s"} between things cairn was told still open: listed under "Waiting for approval"`);
  return { heading: "Facts that changed", aside: `(${superseded.length} no longer true, ${conflicts.decided.length} disagreement${conflicts.decided.length === 1 ? "" : "s"} settled, ${conflicts.open} open)`, lines };
}

/** `verify` is another part's command: its buttons appear once the command exists, the typed form always. */
const VERIFY = parseCommand("verify");

function dueSection(d: LoopData, verifyDays: number): ReportSection | null {
  if (d.due.count === 0) return null;
  const lines = d.due.items.map((e, i) => `- ${i + 1}. ${q(e.text, e.channelKey)} (${e.scope} ${e.kind}, last confirmed ${e.lastConfirmed}) · ${typed("verify", e.id)}`);
  lines.push(...more(d.due.count, d.due.items.length, "`/cairn team` lists them"));
  const buttons: ViewButton[] = VERIFY ? d.due.items.slice(0, LOOP_BUTTONS).map((e, i) => ({ label: `Still true ${i + 1}`, command: VERIFY, args: [e.id] })) : [];
  return { heading: "Due for confirmation", aside: `(${d.due.count} thing${d.due.count === 1 ? "" : "s"} the team taught cairn that nobody has said are still true for ${verifyDays} days)`, lines, buttons };
}

function queueOf(waiting: readonly WaitingRow[], end: Date): ReportSection | null {
  if (waiting.length === 0) return null;
  const { lines, buttons } = queueSection(waiting, end, LOOP_QUEUE, CHANNELS_UNQUOTED);
  const oldest = waiting[0]!;
  const days = Math.floor((end.getTime() - oldest.since.getTime()) / (24 * HOUR_MS));
  return { heading: "Waiting for approval", aside: `(${waiting.length} in all, the oldest ${days} day${days === 1 ? "" : "s"}; a button runs the command as whoever clicks it)`, lines, buttons };
}

/** The loop's sections, in the order the report shows them; empty ones left out. */
export function loopSections(loop: Loop, end: Date, verifyDays: number): ReportSection[] {
  return [curatorSection(loop.data), changedSection(loop.data), dueSection(loop.data, verifyDays), queueOf(loop.waiting, end)].filter((s): s is ReportSection => s !== null);
}
