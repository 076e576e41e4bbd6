/**
 * The command dispatcher: `/cairn <name> <args>` on every platform lands here. The answers
 * (Markdown, rendered by each adapter) and the rules (who may do what) live in the commands
 * themselves, so every platform behaves the same. Names and parsing: ground/commands.ts.
 */
import type { Inbound } from "../ground/types.ts";
import type { Logger } from "../ground/log.ts";
import { scopeOf, type HistoryStore, type Place } from "../history/store/store.ts";
import { budgetHeader, kindOf, usedChars, type MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { ReportStore } from "../report/report-store.ts";
import type { ErasureCounts, ErasureStore } from "../erasure/erasure-store.ts";
import { learnCommand, type LearnDeps } from "./learn.ts";
import { forgetLessonOrRule, judgeRule, listLessons, type LessonsDeps } from "./lessons.ts";
import { latestReport } from "./report.ts";
import { historyCommand, type HistoryCommandDeps } from "./history.ts";
import { rollbackCommand, type RollbackDeps } from "./rollback.ts";
import { jobsCommand, type JobsDeps } from "./jobs.ts";
import { skillCommand, type SkillCommandDeps } from "./skills.ts";
import { proposalCommand, type ProposalDeps } from "./proposal.ts";
import { personaCommand, type PersonaCommandDeps } from "./persona.ts";
import { buildView, type ViewDeps } from "../views/build.ts";
import { viewMarkdown } from "../views/markdown.ts";
import { listenCommand, type ListenDeps } from "./listen.ts";
import { whyCommand, type WhyDeps } from "./why.ts";
import { teachersCommand, type TeachersDeps } from "./teachers.ts";
import { verifyCommand, type VerifyDeps } from "./verify.ts";
import { isConflictVerdict, keepConflict, KEEP_VERDICTS, type ConflictDeps } from "./conflict.ts";
import type { CommandName, CommandReply } from "../ground/commands.ts";
import type { Learning } from "../learning/learning.ts";
import { dayOf, sinceOf } from "../memory/validity.ts";

/** What the dispatcher answers itself (help, new, me, skills, confirm, report, forget): the stores it reads and writes, and the session to end. */
export interface DispatchDeps {
  history: HistoryStore;
  memory: MemoryStore;
  skills: SkillStore;
  reports: ReportStore;
  erasure: ErasureStore;
  log: Logger;
  endSession(inbound: Inbound, reason: "request"): Promise<void>;
}

/** Everything a command may need: the dispatcher's own, and each command's (the core holds them all). */
export type CommandServices = DispatchDeps &
  LearnDeps &
  LessonsDeps &
  ProposalDeps &
  ConflictDeps &
  HistoryCommandDeps &
  RollbackDeps &
  JobsDeps &
  SkillCommandDeps &
  PersonaCommandDeps &
  ListenDeps &
  WhyDeps &
  TeachersDeps &
  VerifyDeps &
  ViewDeps;

const HELP = `**cairn** remembers what your team teaches it.
- Talk to it in a DM, or mention it in a channel; it follows the thread after that.
- Tell it your preferences ("I prefer bullet points"), team conventions and decisions: it saves them.
- It keeps a shared library of skills (procedures) the whole team can use and improve.
- What you tell it in a DM stays yours. What you ask it to remember for the team, and a team skill you make, stays where you said it (this channel, or yours from a DM) until a teammate approves it with ✅ or \`approve <id>\`; a change to a team skill waits for their approval too.
Commands:
\`help\` this text · \`me\` what cairn knows about you · \`team\` the team's rules, lessons, proposals and memory · \`skills\` the skill library · \`new\` start a fresh session
\`learn <text>\` turn pasted text into a skill (\`learn\` alone: learn from this conversation; cairn opens no links)
\`lessons\` the lessons and team rules you can see, with their ids and where each came from · \`why\` what my last answer here drew on (rules, lessons, facts, skills, searches; on Slack and Discord, *Why this answer?* on any answer of mine)
\`forget <id>\` delete one of your entries or private lessons, archive a channel lesson you taught (admins: a team rule) · \`forget me\` erase everything cairn holds about you
\`confirm <id>\` share an entry you proposed from a DM with the team · \`approve <id>\` / \`reject <id>\` a proposed team rule, team skill or change to one, or fact for the whole team (as ✅ does; not your own) · \`keep <id>\` / \`reword <id> <text>\` a doubtful team rule (admins) · \`keep new|old|both <id>\` say which of two disagreeing entries holds · \`verify <id>\` say a shared fact, rule, lesson or team skill still holds (\`verify\` alone: what is due here)
\`pin|unpin|archive|restore <skill>\` keep the skill library (admins) · \`persona\` how cairn speaks here (\`persona set <text>\`, \`persona clear\`: admins)
\`listen on|off|status\` keep this channel's messages so people who can read it can ask what was said (on/off: admins) · \`listen exclude-me\` leave yours out
\`report\` the latest weekly self-review: what cairn learned, its corrections and trends
\`history <skill or entry id>\` every change to it, with revision ids · \`rollback <revision id>\` undo one change (admins; your own private items: you)
\`teachers list|add|remove <user>\` people whose team writes need no approval (admins) · \`jobs\` the curator's and the weekly report's last and next runs · \`jobs run curator|report\` run one now (admins; \`--dry-run\`: the curator only says what it would change)`;

export async function runCommand(services: CommandServices, inbound: Inbound, name: CommandName, args: readonly string[]): Promise<CommandReply> {
  const place = (): Promise<Place> => services.history.resolve(inbound);
  switch (name) {
    case "help":
      return { text: HELP, ephemeral: true };
    case "new": {
      await services.endSession(inbound, "request");
      return { text: "Started a new session: I'll take a fresh look at memory and skills from your next message. Earlier conversations stay searchable.", ephemeral: false };
    }
    case "me":
      return { text: await describePerson(services, await place()), ephemeral: true };
    case "skills": {
      const skills = await services.skills.list(scopeOf(await place()));
      const lines = skills.length ? skills.map((s) => `- \`${s.name}\`${s.bundled ? " (bundled)" : ""}${s.pinned ? " (pinned)" : ""}${s.status === "stale" ? " (stale: unused lately)" : ""}: ${s.description}`) : ["- (none yet)"];
      return { text: [`**Skills** (${skills.length})`, ...lines].join("\n"), ephemeral: true };
    }
    case "learn":
      return learnCommand(services, inbound, await place(), args.join(" "));
    case "lessons":
      return listLessons(services, await place());
    case "why":
      return whyCommand(services, await place(), args[0]);
    case "keep":
      if (isConflictVerdict(args[0])) return keepConflict(services, await place(), KEEP_VERDICTS[args[0].toLowerCase() as keyof typeof KEEP_VERDICTS], args[1]);
      return judgeRule(services, inbound, await place(), name, args[0], args.slice(1).join(" "));
    case "reword":
      return judgeRule(services, inbound, await place(), name, args[0], args.slice(1).join(" "));
    case "forget":
      return forget(services, inbound, await place(), args);
    case "confirm": {
      const p = await place();
      const scope = scopeOf(p);
      const ids = args.length ? args : (await services.memory.pendingBy(scope)).map((e) => e.id);
      if (ids.length === 0) return { text: "You have nothing waiting to be shared with the team.", ephemeral: true };
      const shared = await services.memory.confirm(scope, ids, { source: "tool", actorId: p.person.id, sourceMessageId: null, reason: "confirmed by the person" });
      if (shared.length === 0) return { text: `No pending entry of yours has the id ${ids.join(", ")}. \`me\` lists them.`, ephemeral: true, outcome: "not_found" };
      const what = (e: { text: string; scope: string; replacesId: string | null }) =>
        e.replacesId ? (e.text ? `- replaced with: ${e.text}` : "- removed an entry") : `- ${e.text}${e.scope === "team" ? " (shared with the team)" : ""}`;
      return { text: `Confirmed:\n${shared.map(what).join("\n")}`, ephemeral: true, outcome: "done" };
    }
    case "report":
      return latestReport(services.reports, scopeOf(await place()));
    case "history":
      return historyCommand(services, await place(), args[0]);
    case "rollback":
      return rollbackCommand(services, inbound, await place(), args[0]);
    case "pin":
    case "unpin":
    case "archive":
    case "restore":
      return skillCommand(services, inbound, await place(), name, args[0]);
    case "approve":
    case "reject":
      return proposalCommand(services, await place(), name, args[0]);
    case "persona":
      return personaCommand(services, inbound, await place(), args);
    case "listen":
      return listenCommand(services, inbound, await place(), args);
    case "team":
      return { text: viewMarkdown(await buildView(services, inbound, { pane: "team", pageSize: 20 })), ephemeral: true };
    case "jobs":
      return jobsCommand(services, inbound, args);
    case "teachers":
      return teachersCommand(services, inbound, await place(), args);
    case "verify":
      return verifyCommand(services, await place(), args);
  }
}

async function describePerson(deps: Pick<DispatchDeps, "history" | "memory" | "skills"> & { learning: Pick<Learning, "previousTexts"> }, p: Place): Promise<string> {
  const scope = scopeOf(p);
  const entries = await deps.memory.entries(scope, "user");
  const previous = await deps.learning.previousTexts(scope, entries);
  const pending = await deps.memory.pendingBy(scope);
  const skills = (await deps.skills.list(scope)).filter((s) => s.scope === "user" && s.ownerId === p.person.id);
  const used = usedChars(entries.filter((e) => kindOf(e) === "fact").map((e) => e.text));
  const messages = await deps.history.countByAuthor(scope);
  const line = (e: { id: string; kind: string; text: string; source: string; createdAt: Date; validFrom?: Date | null; proposedScope?: string | null }) => {
    const was = previous.get(e.id);
    const since = was ? `; since ${dayOf(sinceOf({ createdAt: e.createdAt, validFrom: e.validFrom ?? null }))} (was: ${was.text})` : "";
    return `- ${kindOf(e) === "lesson" ? "(lesson) " : ""}${e.text}  *(id ${e.id}, ${e.source}, ${e.createdAt.toISOString().slice(0, 10)}${since}${e.proposedScope === "team" ? "; asked for the team: a teammate's `approve` shares it" : ""})*`;
  };
  // A review's pending change to an existing entry says what it would do to it.
  const pendingLine = (e: { id: string; kind: string; text: string; source: string; createdAt: Date; scope: string; replacesId: string | null }) =>
    e.replacesId === null
      ? line({ ...e, text: `${e.text}${e.scope === "team" ? " (for the team)" : ""}` })
      : line({ ...e, text: e.text ? `replace an entry (${e.replacesId}) with: ${e.text}` : `remove the entry ${e.replacesId}` });
  return [
    `**Your profile** ${budgetHeader(used, deps.memory.limit("user"))}`,
    ...(entries.length ? entries.map(line) : ["- (nothing yet)"]),
    ...(pending.length ? ["**Waiting for your confirmation** (`confirm <id>`; a ✅ on the message that announced it works too)", ...pending.map(pendingLine)] : []),
    ...(skills.length ? ["**Your private skills**", ...skills.map((s) => `- \`${s.name}\` (id ${s.id})`)] : []),
    `Stored messages from you: ${messages}.`,
    "`forget <id>` deletes one entry; `forget me` erases everything cairn holds about you.",
  ].join("\n");
}

async function forget(deps: Pick<DispatchDeps, "erasure" | "log"> & LessonsDeps, inbound: Inbound, p: Place, args: readonly string[]): Promise<CommandReply> {
  const [what, ...rest] = args;
  if (!what) return { text: "Usage: `forget <id>` (ids are listed by `me` and `lessons`) or `forget me`.", ephemeral: true };
  if (what.toLowerCase() !== "me") {
    // Channel lessons and team rules are archived (they are shared); the person's own entries are
    // deleted. Either way the text is forgotten: nothing writes it back (erasure/tombstone-store.ts).
    const shared = await forgetLessonOrRule(deps, inbound, p, what, (entry) => deps.erasure.forgetShared(scopeOf(p), entry.text));
    if (shared) return shared;
    const ok = await deps.erasure.forgetEntry(scopeOf(p), what);
    deps.log.info({ person: p.person.id, entry: what, deleted: ok }, "forget entry");
    return { text: ok ? "Deleted. It is gone from cairn's memory and history of changes." : `None of your entries has the id ${what}. \`me\` and \`lessons\` list them.`, ephemeral: true, outcome: ok ? "done" : "not_found" };
  }
  // Erasure needs a second, explicit step within a window; the request is stored, so the step may
  // reach another replica.
  const now = new Date();
  const confirm = rest.some((a) => a.toLowerCase() === "confirm");
  if (!confirm || !(await deps.erasure.claimErasure(scopeOf(p), now))) {
    await deps.erasure.requestErasure(scopeOf(p), now);
    // The dry run: the erasure's own statements, counted (erasure/plan-store.ts); nothing changes yet.
    const would = await deps.erasure.dryRun(scopeOf(p), { anonymize: true });
    return {
      text: `This erases your profile, your private skills and entries you proposed, as of now ${counted(would)}. Every message you sent (and cairn's replies in your DMs) keeps only a tombstone, and cairn will not read back or save again what was erased. Team entries you contributed stay. Nothing has changed yet. To go ahead, send \`forget me confirm\` within 10 minutes; \`forget me confirm anonymous\` also removes your name from the ${would.anonymized} team contributions that carry it.`,
      ephemeral: true,
    };
  }
  const anonymize = rest.some((a) => a.toLowerCase() === "anonymous");
  const counts = await deps.erasure.erasePerson(scopeOf(p), { anonymize });
  // Logged without content: counts only.
  deps.log.info({ person: p.person.id, ...counts, anonymize }, "person data erased");
  return {
    text: `Done. Erased ${counted(counts)}${anonymize ? `; removed your name from ${counts.anonymized} team contributions` : ""}.`,
    ephemeral: true,
    outcome: "done",
  };
}

/** The counts of an erasure, worded alike before (the dry run) and after. */
function counted(c: ErasureCounts): string {
  return `${c.profileEntries} profile entries, ${c.pendingEntries} pending entries, ${c.privateSkills} private skills, ${c.channelMessages} messages kept from channels, and the text of ${c.messages} messages`;
}
