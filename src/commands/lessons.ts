/**
 * `/cairn lessons` and `forget <id>` for lessons and team rules.
 *
 * What a person sees: their own private lessons, the current channel's lessons (not in a DM), and
 * the workspace's team rules (in force, and those waiting for ✅), each with its id, the correction
 * it came from in the corrector's words, who and when, and a link to the correction when there is one;
 * then the changes to team skills proposed in this channel, waiting for approval.
 *
 * Forgetting (who may do what):
 * - A private lesson is the person's own: deleted for real, revisions and all (src/erasure/erasure-store.ts).
 * - A channel lesson belongs to the channel once saved (others saw it and may have approved it):
 *   its author (or an admin) archives it, with a revision; it is never deleted.
 * - A team rule is the whole workspace's: only an admin archives it, with a revision "archived by an
 *   admin"; anyone else is told so.
 */
import type { Inbound } from "../ground/types.ts";
import type { CommandReply } from "../ground/commands.ts";
import type { Logger } from "../ground/log.ts";
import { scopeOf, workspaceScopeOf, type Place } from "../history/store/store.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import { excerpt, parseCase, QUOTE_CHARS } from "../lessons/lesson-case.ts";
import type { LessonStore, MemoryEntry } from "../lessons/lesson-store.ts";
import { nameOf } from "../learning/places.ts";
import { proposalSummary } from "../learning/skill-proposals.ts";
import type { Learning } from "../learning/learning.ts";
import { scanForWrite } from "../safety/scanner.ts";
import { shortIds } from "../ground/short-id.ts";

/** Lines of lessons and rules in one answer; the rest are counted. */
export const LESSONS_SHOWN = 30;

/** What the lessons commands need: the lesson store and the skill proposals (the core's learning loop holds them), and for `forget` who is an admin. */
export interface LessonsDeps {
  learning: { lessons: LessonStore } & Pick<Learning, "pendingSkillChanges">;
  settings: { access: AccessPolicy };
  log: Logger;
}

export async function listLessons(deps: Pick<LessonsDeps, "learning">, place: Place): Promise<CommandReply> {
  const c = place.conversation;
  const [{ own, channel, rules, authors: people }, skillChanges] = await Promise.all([
    deps.learning.lessons.listing(scopeOf(place)),
    c.isDm ? [] : deps.learning.pendingSkillChanges(workspaceScopeOf(place), new Set([c.channelId])),
  ]);
  const sections: [string, MemoryEntry[]][] = [
    ["**Your private lessons** (only you see them)", own],
    ...(c.isDm ? [] : [["**This channel's lessons**", channel] as [string, MemoryEntry[]]]),
    ["**Team rules** (everyone in this workspace)", rules],
  ];
  const total = own.length + channel.length + rules.length;
  if (total === 0 && skillChanges.length === 0) {
    // The console has no reactions: there an answer is corrected with `/correct`.
    const how = place.workspace.platform === "console" ? "`/correct <what was wrong>` after it" : "react 👎, then say what it should have done";
    return { text: `No lessons or team rules ${c.isDm ? "for you here" : "for you or this channel"} yet. cairn learns them when you correct an answer (${how}).`, ephemeral: true };
  }
  const lines = [`**Lessons and rules** (${total})`];
  const short = shortIds([...own, ...channel, ...rules, ...skillChanges].map((e) => e.id));
  let shown = 0;
  for (const [title, entries] of sections) {
    if (entries.length === 0 || shown >= LESSONS_SHOWN) continue;
    lines.push(title);
    for (const e of entries.slice(0, LESSONS_SHOWN - shown)) lines.push(lessonLine(e, people.get(e.createdById ?? ""), short));
    shown += Math.min(entries.length, LESSONS_SHOWN - shown);
  }
  if (total > shown) lines.push(`…and ${total - shown} more.`);
  if (skillChanges.length) lines.push("**Team skill changes proposed here** (`approve <id>` / `reject <id>`)", ...skillChanges.slice(0, LESSONS_SHOWN).map((p) => `- \`${short(p.id)}\` ${proposalSummary(p)}`));
  lines.push("`forget <id>` removes one of your lessons (admins: a team rule).");
  return { text: lines.join("\n"), ephemeral: true };
}

/** `short`: how the answer shows ids (ground/short-id.ts); the whole id without it. */
export function lessonLine(e: MemoryEntry, author: { displayName: string | null; externalId: string } | undefined, short: (id: string) => string = (id) => id): string {
  const lessonCase = parseCase(e.origin);
  const who = lessonCase?.by.name ?? (author ? nameOf(author) : "someone");
  const when = (lessonCase?.at ?? e.createdAt.toISOString()).slice(0, 10);
  const quote = e.quote ? ` "${excerpt(e.quote, QUOTE_CHARS)}"` : "";
  const link = lessonCase?.link ? ` ([correction](${lessonCase.link}))` : "";
  const waiting = e.status === "pending" ? " *(waiting for ✅)*" : "";
  return `- \`${short(e.id)}\` ${e.text}${waiting} —${quote} *(${who}, ${when})*${link}`;
}

/**
 * `forget <id>` for a channel lesson or a team rule; null when the id is neither (the caller goes on
 * with the person's own entries, private lessons included).
 */
/** `forgotten`: told of what was archived, so its text is not written back (erasure/tombstone-store.ts). */
export async function forgetLessonOrRule(deps: LessonsDeps, inbound: Inbound, place: Place, id: string, forgotten?: (entry: MemoryEntry) => Promise<void>): Promise<CommandReply | null> {
  const lessons = deps.learning.lessons;
  const entry = await lessons.find(workspaceScopeOf(place), id);
  if (!entry) return null;
  const rule = entry.kind === "rule" && entry.scope === "team";
  const channelLesson = entry.kind === "lesson" && entry.scope === "channel";
  if (!rule && !channelLesson) return null;
  if (entry.status === "archived") return { text: `That ${rule ? "team rule" : "lesson"} is already archived.`, ephemeral: true, outcome: "not_found" };
  const admin = isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId);
  if (rule && !admin) {
    deps.log.info({ person: place.person.id, rule: entry.id }, "forget of a team rule refused");
    return { text: "Only cairn admins can remove team rules: they apply to everyone in this workspace. Ask an admin, or correct cairn where the rule is wrong.", ephemeral: true, outcome: "refused" };
  }
  if (channelLesson && !admin && entry.createdById !== place.person.id) {
    return { text: "That lesson belongs to its channel and was taught by someone else: only its author or a cairn admin can remove it.", ephemeral: true, outcome: "refused" };
  }
  const reason = admin && (rule || entry.createdById !== place.person.id) ? "archived by an admin" : "archived by its author";
  const prov = { source: "tool" as const, actorId: scopeOf(place).personId, sourceMessageId: null, reason };
  const archived = await lessons.archive(entry, prov);
  deps.log.info({ person: place.person.id, entry: entry.id, kind: entry.kind, archived }, "lesson or rule archived");
  if (!archived) return { text: `That ${rule ? "team rule" : "lesson"} is already archived.`, ephemeral: true, outcome: "not_found" };
  await forgotten?.(entry);
  return {
    text: rule
      ? `Archived the team rule: ${entry.text}\nIt is no longer in force from each person's next session; its history is kept.`
      : `Archived the channel lesson: ${entry.text}\nIt is no longer shown; its history is kept.`,
    ephemeral: true,
    outcome: "done",
  };
}

/**
 * `keep <id>` and `reword <id> <text>` for a team rule marked doubtful (answers it was in front of
 * were corrected): admins only, as archiving it is. Keeping it records that a person looked at it
 * (its doubt counts only later corrections); rewording replaces its text, scanned as every shared
 * write is, with a revision `rollback` undoes, and its doubt starts afresh.
 */
export async function judgeRule(deps: LessonsDeps, inbound: Inbound, place: Place, verb: "keep" | "reword", id: string | undefined, text?: string): Promise<CommandReply> {
  const usage = verb === "keep" ? "Usage: `keep <rule id>` (ids are listed by `team` and `lessons`)." : "Usage: `reword <rule id> <the rule as it should read>`.";
  if (!id || (verb === "reword" && !text?.trim())) return { text: usage, ephemeral: true };
  const entry = await deps.learning.lessons.find(workspaceScopeOf(place), id);
  if (!entry || entry.kind !== "rule" || entry.scope !== "team" || entry.status !== "active") return { text: `No team rule in force has the id ${id}. \`lessons\` lists them.`, ephemeral: true, outcome: "not_found" };
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    return { text: "Only cairn admins can keep or reword team rules: they apply to everyone in this workspace.", ephemeral: true, outcome: "refused" };
  }
  const prov = { source: "tool" as const, actorId: scopeOf(place).personId, sourceMessageId: null, reason: verb === "keep" ? "kept by an admin after doubt" : "reworded by an admin" };
  if (verb === "keep") {
    await deps.learning.lessons.keep(entry, prov);
    return { text: `Kept the team rule as it is: ${entry.text}\nIt is no longer doubtful; only corrections from now on count against it.`, ephemeral: true, outcome: "done" };
  }
  const verdict = scanForWrite(text!.trim());
  if (!verdict.ok) return { text: `Not reworded: ${verdict.message}`, ephemeral: true, outcome: "refused" };
  if (!(await deps.learning.lessons.reword(entry, verdict.text, prov))) return { text: "That team rule is no longer in force.", ephemeral: true, outcome: "not_found" };
  return { text: `Reworded the team rule: ${verdict.text}\n(was: ${entry.text}) It applies from each person's next session; \`history ${entry.id}\` and \`rollback\` undo it.`, ephemeral: true, outcome: "done" };
}
