/**
 * The command dispatcher: `/cairn <name> <args>` on every platform lands here. The answers
 * (Markdown, rendered by each adapter) and the rules (who may do what) live in the commands
 * themselves, so every platform behaves the same. Names and parsing: ground/commands.ts.
 */
import type { Inbound } from "../ground/types.ts";
import type { Logger } from "../ground/log.ts";
import { scopeOf, type HistoryStore, type Place } from "../history/store/store.ts";
import { budgetWords, kindOf, usedChars, type MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { ReportStore } from "../report/report-store.ts";
import type { ErasureCounts, ErasureStore } from "../erasure/erasure-store.ts";
import type { Providers } from "../providers/providers.ts";
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
import { withFullIds, type ShortIdDeps } from "./short-id.ts";
import { correctElsewhere, goodCommand, type FeedbackCommandDeps } from "./feedback.ts";
import { helpText } from "./help.ts";
import { shortIds } from "../ground/short-id.ts";
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
  /** `forget me` reaches every memory provider too. */
  providers: Pick<Providers, "forget">;
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
  FeedbackCommandDeps &
  ShortIdDeps &
  ViewDeps;

export async function runCommand(services: CommandServices, inbound: Inbound, name: CommandName, typed: readonly string[]): Promise<CommandReply> {
  const place = (): Promise<Place> => services.history.resolve(inbound);
  // A short id typed for a full one (short-id.ts): made whole, or asked back when it could be several.
  const whole = await withFullIds(services, place, name, typed);
  if ("reply" in whole) return whole.reply;
  const { args } = whole;
  switch (name) {
    case "help":
      return { text: helpText(inbound.platform), ephemeral: true };
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
    case "correct":
      // A correction is answered by a turn, which only the command service's answer can run (service.ts).
      return correctElsewhere(inbound, args.join(" "));
    case "good":
      return goodCommand(services, await place());
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

async function describePerson(deps: Pick<DispatchDeps, "history" | "memory" | "skills" | "erasure"> & { learning: Pick<Learning, "previousTexts"> }, p: Place): Promise<string> {
  const scope = scopeOf(p);
  const entries = await deps.memory.entries(scope, "user");
  const previous = await deps.learning.previousTexts(scope, entries);
  const pending = await deps.memory.pendingBy(scope);
  const skills = (await deps.skills.list(scope)).filter((s) => s.scope === "user" && s.ownerId === p.person.id);
  const used = usedChars(entries.filter((e) => kindOf(e) === "fact").map((e) => e.text));
  // Messages an erasure left as tombstones are not held: counted apart, so `/me` after `forget me` is true.
  const [messages, erased] = await Promise.all([deps.history.countByAuthor(scope), deps.erasure.erasedMessages(scope)]);
  const short = shortIds([...entries, ...pending].flatMap((e) => [e.id, ...(e.replacesId ? [e.replacesId] : [])]));
  const line = (e: { id: string; kind: string; text: string; source: string; createdAt: Date; validFrom?: Date | null; proposedScope?: string | null }) => {
    const was = previous.get(e.id);
    const since = was ? `; since ${dayOf(sinceOf({ createdAt: e.createdAt, validFrom: e.validFrom ?? null }))} (was: ${was.text})` : "";
    return `- ${kindOf(e) === "lesson" ? "(lesson) " : ""}${e.text}  *(id ${short(e.id)}, ${e.source}, ${e.createdAt.toISOString().slice(0, 10)}${since}${e.proposedScope === "team" ? "; asked for the team: a teammate's `approve` shares it" : ""})*`;
  };
  // A review's pending change to an existing entry says what it would do to it.
  const pendingLine = (e: { id: string; kind: string; text: string; source: string; createdAt: Date; scope: string; replacesId: string | null }) =>
    e.replacesId === null
      ? line({ ...e, text: `${e.text}${e.scope === "team" ? " (for the team)" : ""}` })
      : line({ ...e, text: e.text ? `replace an entry (${short(e.replacesId)}) with: ${e.text}` : `remove the entry ${short(e.replacesId)}` });
  return [
    `**Your profile** (${budgetWords(used, deps.memory.limit("user"))})`,
    ...(entries.length ? entries.map(line) : ["- (nothing yet)"]),
    ...(pending.length ? ["**Waiting for your confirmation** (`confirm <id>`; a ✅ on the message that announced it works too)", ...pending.map(pendingLine)] : []),
    ...(skills.length ? ["**Your private skills**", ...skills.map((s) => `- \`${s.name}\` (id ${s.id})`)] : []),
    `Stored messages from you: ${messages}.${erased ? ` ${erased} earlier ${erased === 1 ? "message keeps" : "messages keep"} only a tombstone: the text was erased.` : ""}`,
    "`forget <id>` deletes one entry; `forget me` erases everything cairn holds about you.",
  ].join("\n");
}

async function forget(deps: Pick<DispatchDeps, "erasure" | "providers" | "log"> & LessonsDeps, inbound: Inbound, p: Place, args: readonly string[]): Promise<CommandReply> {
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
  // After cairn's own erasure: a failing provider is logged and counted there, and undoes nothing here.
  await deps.providers.forget(scopeOf(p), { kind: "person", personId: p.person.id });
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
