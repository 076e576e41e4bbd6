/**
 * Builds the view (model.ts) of what one person may see, from the database.
 *
 * What is shown is decided here, in the queries, never by the platform drawing it:
 * - You: the viewer's own profile entries, private lessons and entries waiting for their
 *   confirmation; never another person's.
 * - Team: the team rules, the team memory, the persona; channel lessons and the proposals that come
 *   from them, what people asked cairn to remember for the team (kept where it was said until a
 *   teammate shares it: those asked from a DM are listed to everyone, who asked for it to be shared),
 *   and the proposed changes to team skills and skills proposed for the team made there (or asked
 *   from a DM), only for the channels the viewer can read (`ViewRequest.channels`, which the platform fills from its membership, or the channel
 *   the request came from).
 * - Skills: what the viewer's prompt could read (bundled, team, their own, their channels'), and
 *   the workspace's archived ones of the same kinds, so an admin can restore them.
 * Buttons are offered where the matching command would let the viewer act; the command checks again.
 */
import { disputeItems, sinceWas, type ValidityDeps } from "./validity.ts";
import type { Inbound, WorkspaceScope } from "../ground/types.ts";
import type { MemoryEntry, Person, Skill, ViewStore } from "./view-store.ts";
import { scopeOf, type HistoryStore, type Place } from "../history/store/store.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import { budgetWords, kindOf, usedChars, type MemoryStore } from "../memory/store.ts";
import type { PersonaStore } from "../persona/store.ts";
import type { ReportStore } from "../report/report-store.ts";
import { excerpt, parseCase, QUOTE_CHARS } from "../lessons/lesson-case.ts";
import { nameOf } from "../learning/places.ts";
import { ageText } from "../learning/approval-queue.ts";
import { proposalSummary } from "../learning/skill-proposals.ts";
import type { SkillProposal } from "../skills/proposal-store.ts";
import { DEFAULT_PAGE_SIZE, type Pane, type TeamView, type ViewButton, type ViewGroup, type ViewItem, type ViewRequest, type ViewSection } from "../ground/view-model.ts";
import { weekLines } from "./week.ts";
import { freshnessGroups, type FreshnessDeps } from "./freshness.ts";

/** What a view is built from: the stores it reads, and who is an admin (for the buttons offered). */
export interface ViewDeps {
  /** Team rules in front of several corrected answers lately: listed as doubtful, with Keep and Reword. */
  learning: {
    doubtfulRules(scope: WorkspaceScope): Promise<ReadonlySet<string>>;
    /** Changes to team skills waiting for approval, from conversations in the channels given. */
    pendingSkillChanges(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<SkillProposal[]>;
    /** What people asked cairn to remember for the team, kept where it was said until a teammate shares it. */
    pendingShares(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<MemoryEntry[]>;
    /** The loop's clock: how long a proposal has waited (issue 27). */
    ctx: { now: () => Date };
    /** Shared items due for confirmation and decayed lessons and rules (issue 27): views/freshness.ts. */
    freshness: FreshnessDeps;
  } & ValidityDeps;
  history: HistoryStore;
  memory: MemoryStore;
  views: ViewStore;
  persona: PersonaStore;
  reports: ReportStore;
  settings: { access: AccessPolicy };
}

const day = (d: Date): string => d.toISOString().slice(0, 10);

interface Ctx {
  deps: ViewDeps;
  place: Place;
  admin: boolean;
  channels: ReadonlySet<string>;
  req: ViewRequest;
  people: (ids: readonly (string | null)[]) => Promise<Map<string, Person>>;
}

export async function buildView(deps: ViewDeps, inbound: Inbound, req: ViewRequest): Promise<TeamView> {
  const place = await deps.history.resolve(inbound);
  const admin = isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId);
  const channels = new Set(req.channels ?? (place.conversation.isDm ? [] : [place.conversation.channelId]));
  const people = (ids: readonly (string | null)[]): Promise<Map<string, Person>> => deps.views.people(scopeOf(place), ids);
  const ctx: Ctx = { deps, place, admin, channels, req, people };
  const builders: Record<Exclude<Pane, "home">, () => Promise<ViewSection>> = { me: () => you(ctx), team: () => team(ctx), skills: () => skills(ctx) };
  const sections =
    req.pane === "home" ? await Promise.all([you(ctx), team(ctx), skills(ctx), week(ctx)]) : [await builders[req.pane]()];
  return { pane: req.pane, admin, sections };
}

/** One page of a group's items. */
function group(ctx: Ctx, id: string, title: string, all: readonly ViewItem[], empty: string): ViewGroup {
  const size = Math.max(1, ctx.req.pageSize ?? DEFAULT_PAGE_SIZE);
  const pages = Math.max(1, Math.ceil(all.length / size));
  const page = Math.min(Math.max(0, Math.floor(ctx.req.pages?.[id] ?? 0)), pages - 1);
  return { id, title, items: all.slice(page * size, (page + 1) * size), total: all.length, page, pages, empty };
}

const confirmDelete = (what: string, text: string): ViewButton["confirm"] => ({ title: `Delete this ${what}?`, text: excerpt(text, 250), yes: "Delete", no: "Cancel" });

async function you(ctx: Ctx): Promise<ViewSection> {
  const { deps, place } = ctx;
  const scope = scopeOf(place);
  const [entries, pending, messages] = await Promise.all([deps.memory.entries(scope, "user"), deps.memory.pendingBy(scope), deps.history.countByAuthor(scope)]);
  const previous = await deps.learning.previousTexts(scope, entries);
  const facts = entries.filter((e) => kindOf(e) === "fact");
  const lessons = entries.filter((e) => kindOf(e) === "lesson");
  const entryItem = (e: MemoryEntry, what: string): ViewItem => ({
    id: e.id,
    markdown: `${e.text}  _(${e.source}, ${day(e.createdAt)}${sinceWas(e, previous)}${e.proposedScope === "team" ? "; asked for the team: waiting for a teammate's approval" : ""})_`,
    buttons: [{ label: "Delete", command: "forget", args: [e.id], style: "danger", confirm: confirmDelete(what, e.text) }],
  });
  const waiting = pending.map(
    (e): ViewItem => ({
      id: e.id,
      markdown: e.replacesId === null ? `${e.text}${e.scope === "team" ? " _(for the team)_" : ""}` : e.text ? `Replace an entry with: ${e.text}` : "Remove an entry",
      buttons: [{ label: "Share", command: "confirm", args: [e.id], style: "primary" }],
    }),
  );
  return {
    id: "you",
    title: "You",
    lines: [`Your profile: ${budgetWords(usedChars(facts.map((e) => e.text)), deps.memory.limit("user"))}. Stored messages from you: ${messages}.`],
    buttons: [
      {
        label: "Forget me",
        command: "forget",
        args: ["me"],
        style: "danger",
        next: { label: "Erase everything", command: "forget", args: ["me", "confirm"], style: "danger" },
      },
    ],
    groups: [
      group(ctx, "profile", "Your profile", facts.map((e) => entryItem(e, "entry")), "Nothing yet: cairn saves what you tell it about yourself and how you like answers."),
      group(ctx, "private-lessons", "Your private lessons", lessons.map((e) => entryItem(e, "lesson")), "None: corrections you make in a DM become lessons only you see."),
      ...(waiting.length ? [group(ctx, "waiting", "Waiting for your confirmation", waiting, "")] : []),
    ],
  };
}

/** Who taught a lesson or rule and when: the correction's own record first, else the row's author. */
function taught(e: MemoryEntry, people: Map<string, Person>): string {
  const c = parseCase(e.origin);
  const who = c?.by.name ?? nameOf(e.createdById ? people.get(e.createdById) : null);
  const quote = e.quote ? ` "${excerpt(e.quote, QUOTE_CHARS)}"` : "";
  return `taught by ${who}, ${(c?.at ?? e.createdAt.toISOString()).slice(0, 10)}${quote}`;
}

async function team(ctx: Ctx): Promise<ViewSection> {
  const { deps, place, admin } = ctx;
  const scope = scopeOf(place);
  const me = place.person.id;
  // Every proposal says how long it has waited: nothing should wait unseen (learning/remind-job.ts).
  const waited = (since: Date): string => `waiting ${ageText(deps.learning.ctx.now().getTime() - since.getTime())}`;
  // Membership is part of the query: a channel the viewer cannot read contributes no row.
  const [{ rules, pendingRules, channelLessons, facts }, persona, doubtful, skillChanges, shares, fresh] = await Promise.all([
    deps.views.teamMemory(scope, ctx.channels),
    deps.persona.get(scope),
    deps.learning.doubtfulRules(scope),
    deps.learning.pendingSkillChanges(scope, ctx.channels),
    deps.learning.pendingShares(scope, ctx.channels),
    freshnessGroups(deps.learning.freshness, scope, { channels: ctx.channels, here: place.conversation, admin, me, group: (id, title, items) => group(ctx, id, title, items, "") }),
  ]);
  const people = await ctx.people([...[...rules, ...pendingRules, ...channelLessons, ...facts, ...shares].map((e) => e.createdById), ...skillChanges.map((p) => p.proposedById)]);
  const [previous, disputes] = await Promise.all([deps.learning.previousTexts(scope, [...facts, ...rules, ...channelLessons]), deps.learning.disputes(scope)]);
  const proposed = [...pendingRules, ...channelLessons.filter((e) => e.proposalMessageId !== null)];
  // The same rule as ✅: the proposer's own approval does not count, unless they are an admin.
  const mayJudge = (e: MemoryEntry): boolean => admin || e.createdById !== me;
  const judgeButtons = (id: string, text: string): ViewButton[] => [
    { label: "Approve", command: "approve", args: [id], style: "primary" },
    { label: "Reject", command: "reject", args: [id], style: "danger", confirm: { title: "Reject this proposal?", text: excerpt(text, 250), yes: "Reject", no: "Cancel" } },
  ];
  const proposals = proposed.map(
    (e): ViewItem => ({
      id: e.id,
      markdown: `${e.text}  _(${e.kind === "rule" ? "would replace a team rule; " : ""}${taught(e, people)}; ${waited(e.createdAt)})_`,
      buttons: mayJudge(e) ? judgeButtons(e.id, e.text) : [],
    }),
  );
  // Asked for the team, kept where it was said: the same judgement as ✅ on cairn's reply (learning/shares.ts).
  const shareItems = shares.map((e): ViewItem => {
    const where = e.scope === "channel" ? `kept in ${channelName(e.channelKey)}` : "asked in a DM, kept as theirs";
    return { id: e.id, markdown: `${e.text}  _(for the whole team${e.kind === "lesson" ? " (lesson)" : ""}; ${where}; ${taught(e, people)}; ${waited(e.createdAt)})_`, buttons: mayJudge(e) ? judgeButtons(e.id, e.text) : [] };
  });
  const skillProposals = skillChanges.map((p): ViewItem => {
    const summary = proposalSummary(p);
    const who = nameOf(p.proposedById ? people.get(p.proposedById) : null);
    // A turn's proposal names the message that asked; a review's has none.
    const from = `${p.sourceMessageId === null ? `from a review of ${who}'s conversation` : `asked by ${who}`}, ${day(p.createdAt)}; ${waited(p.createdAt)}`;
    return { id: p.id, markdown: `${summary}  _(${from})_`, buttons: admin || p.proposedById !== me ? judgeButtons(p.id, summary) : [] };
  });
  const archive = (e: MemoryEntry, what: string): ViewButton => ({ label: "Archive", command: "forget", args: [e.id], style: "danger", confirm: { title: `Archive this ${what}?`, text: excerpt(e.text, 250), yes: "Archive", no: "Cancel" } });
  const judge = (e: MemoryEntry): ViewButton[] => [
    { label: "Keep", command: "keep", args: [e.id], style: "primary" },
    { label: "Reword", command: "reword", args: [e.id], input: { title: "Reword the team rule", label: "The rule as it should read", initial: e.text, maxLength: 1000, multiline: true } },
  ];
  const ruleItems = rules.map((e): ViewItem => {
    const doubt = doubtful.has(e.id) ? " ⚠️ **doubtful**: answers it was in front of were corrected lately" : "";
    return { id: e.id, markdown: `${e.text}  _(${taught(e, people)}${fresh.dated(e)})_${doubt}`, buttons: [...fresh.buttons(e), ...(admin ? [...(doubt ? judge(e) : []), archive(e, "team rule")] : [])] };
  });
  const lessonItems = channelLessons
    .filter((e) => e.proposalMessageId === null && e.proposedScope === null)
    .map((e): ViewItem => ({ id: e.id, markdown: `${e.text}  _(in ${channelName(e.channelKey)}; ${taught(e, people)}${fresh.dated(e)})_`, buttons: [...fresh.buttons(e), ...(admin || e.createdById === me ? [archive(e, "lesson")] : [])] }));
  const factItems = facts.map((e): ViewItem => ({ id: e.id, markdown: `${e.text}  _(${e.source}, ${day(e.createdAt)}${sinceWas(e, previous)}${fresh.dated(e)})_`, buttons: fresh.buttons(e) }));
  const budget = deps.persona.limit;
  return {
    id: "team",
    title: "Team",
    lines: [persona ? `**How cairn works here** (set by admins): ${persona.text}` : "**How cairn works here**: cairn's built-in guidance alone (no persona set)."],
    buttons: admin
      ? [{ label: "Edit persona", command: "persona", args: ["set"], input: { title: "Team persona", label: "How cairn speaks and what it always does", initial: persona?.text ?? "", maxLength: budget, multiline: true } }]
      : [],
    groups: [
      ...(disputes.length ? [group(ctx, "disputes", "Disagreements: which is right?", disputeItems(disputes), "")] : []),
      group(ctx, "proposals", "Waiting for approval", [...proposals, ...shareItems, ...skillProposals], "No proposals waiting."),
      group(ctx, "rules", "Team rules", ruleItems, "No team rules yet: a correction approved with ✅ becomes one."),
      group(ctx, "channel-lessons", "Lessons of your channels", lessonItems, "No lessons in the channels you are in."),
      group(ctx, "team-memory", "Team memory", factItems, "Nothing saved for the whole team yet."),
      ...fresh.groups,
    ],
  };
}

/** A channel as Markdown: the platform shows its name (Slack `<#C…>`, Discord `<#…>`). */
const channelName = (key: string | null): string => (key ? `<#${key}>` : "a channel");

async function skills(ctx: Ctx): Promise<ViewSection> {
  const { deps, place, admin } = ctx;
  // Visible skills of any status: the query shape the skills index uses, archived ones included.
  const rows = await deps.views.skills(scopeOf(place), ctx.channels);
  const items = rows.map((s): ViewItem => ({ id: s.id, markdown: skillLine(s), buttons: admin ? skillButtons(s) : [] }));
  return { id: "skills", title: "Skills", lines: [], buttons: [], groups: [group(ctx, "skills", "Skills", items, "No skills yet: cairn saves procedures it works out, and `/cairn learn` turns text into one.")] };
}

export function statusOf(s: Pick<Skill, "status" | "pinned" | "bundled">): string {
  if (s.status === "archived") return "archived";
  if (s.pinned) return "pinned";
  if (s.bundled) return "bundled";
  return s.status === "stale" ? "stale" : "active";
}

function skillLine(s: Skill): string {
  const used = s.useCount === 0 ? "never used" : `used ${s.useCount} time${s.useCount === 1 ? "" : "s"}, last ${s.lastUsedAt ? day(s.lastUsedAt) : "unknown"}`;
  return `\`${s.name}\` (${statusOf(s)}): ${s.description}  _(${used})_`;
}

/** Admin buttons on a skill: what pin, unpin, archive and restore would accept. */
function skillButtons(s: Skill): ViewButton[] {
  if (s.bundled) return [];
  if (s.status === "archived") return [{ label: "Restore", command: "restore", args: [s.name], style: "primary" }];
  return [
    s.pinned ? { label: "Unpin", command: "unpin", args: [s.name] } : { label: "Pin", command: "pin", args: [s.name] },
    ...(s.pinned ? [] : [{ label: "Archive", command: "archive", args: [s.name], style: "danger", confirm: { title: "Archive this skill?", text: `${s.name}: it leaves every prompt's skills index; Restore brings it back.`, yes: "Archive", no: "Cancel" } } satisfies ViewButton]),
  ];
}

async function week(ctx: Ctx): Promise<ViewSection> {
  const report = await ctx.deps.reports.latest(scopeOf(ctx.place));
  return { id: "week", title: "This week", lines: weekLines(report), buttons: [], groups: [] };
}
