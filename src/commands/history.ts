/**
 * `/cairn history <skill name | entry id | run id>`: the revisions of one skill or memory entry
 * (newest first, with who, why, the run and a glimpse of the text), or every change of one curator
 * run. Only items the asker may see (revisions/items.ts) are listed; the answer is private to the asker.
 */
import type { Place } from "../history/store/store.ts";
import { scopeOf } from "../history/store/store.ts";
import type { CommandReply } from "../ground/commands.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { nameOf } from "../learning/places.ts";
import { itemVisible } from "../revisions/items.ts";
import type { Actor, Item, Revision, RevisionStore } from "../revisions/revision-store.ts";
import { personaHistory } from "./persona-history.ts";
import { shortId, shortIds } from "../ground/short-id.ts";

/** What `history` needs: the revisions of skills, entries and the persona. */
export interface HistoryCommandDeps {
  revisions: RevisionStore;
}

const SHOWN = 20;
const GLIMPSE = 80;

const reply = (text: string): CommandReply => ({ text, ephemeral: true });
const oneLine = (s: string) => excerpt(s.replace(/\s+/g, " "), GLIMPSE);

/** `short`: how this answer shows revision ids (ground/short-id.ts). */
function revLine(r: Revision, who: ReadonlyMap<string, Actor>, short: (id: string) => string, label?: string): string {
  const by = r.actorId ? nameOf(who.get(r.actorId)) : r.source;
  const text = r.oldText !== null && r.newText !== null && r.oldText !== r.newText ? ` — "${oneLine(r.oldText)}" → "${oneLine(r.newText)}"` : "";
  const file = r.path ? ` ${r.path}` : "";
  const run = r.runId ? ` (run ${r.runId})` : "";
  return `- \`${short(r.id)}\` ${r.createdAt.toISOString().slice(0, 10)}${label ? ` ${label}` : ""} **${r.action}**${file} by ${by}${r.reason ? `: ${r.reason}` : ""}${run}${text}`;
}

function header(item: Item): string {
  if (item.type === "skill") {
    const s = item.row;
    const marks = [s.status, ...(s.pinned ? ["pinned"] : []), ...(s.bundled ? ["bundled"] : []), `source ${s.source}`].join(", ");
    return `**History of skill \`${s.name}\`** (${marks})`;
  }
  const e = item.row;
  const lines = [`**History of entry \`${shortId(e.id)}\`** (${e.scope} ${e.kind}, ${e.status}, source ${e.source}): ${oneLine(e.text)}`];
  if (e.flag) lines.push(`⚠ Flagged for a person: ${e.flag}`);
  return lines.join("\n");
}

const FOOTER = "`rollback <revision id>` undoes one change (cairn admins; your own private skills and profile entries: you).";

export async function historyCommand(deps: HistoryCommandDeps, place: Place, ref: string | undefined): Promise<CommandReply> {
  if (!ref) return reply("Usage: `history <skill name | entry id | curator run id | persona>`.");
  if (ref.toLowerCase() === "persona") return personaHistory(deps, place);
  const revisions = deps.revisions;
  const scope = scopeOf(place);
  const item = await revisions.findItem(scope, ref);
  if (item && itemVisible(scope, item)) {
    const past = await revisions.ofItem(scope, item, SHOWN);
    const who = await revisions.actors(scope, past);
    const short = shortIds(past.map((r) => r.id));
    return reply([header(item), ...(past.length ? past.map((r) => revLine(r, who, short)) : ["- (no recorded changes)"]), FOOTER].join("\n"));
  }
  // A curator run: its changes to items this person may see.
  const changes = await revisions.ofRun(scope, ref, 200);
  const shown: string[] = [];
  const who = await revisions.actors(scope, changes);
  const short = shortIds(changes.flatMap((r) => [r.id, r.entityId]));
  for (const r of changes) {
    const it = await revisions.itemOf(scope, r);
    if (!it || !itemVisible(scope, it)) continue;
    if (shown.length < SHOWN * 2) shown.push(revLine(r, who, short, it.type === "skill" ? `skill \`${it.row.name}\`` : `entry \`${short(it.row.id)}\``));
  }
  if (shown.length === 0) return reply(`No skill, entry or curator run named \`${ref}\` that you can see. \`skills\`, \`me\` and \`lessons\` list names and ids.`);
  return reply([`**Changes of run ${ref}** (${shown.length} you can see)`, ...shown, FOOTER].join("\n"));
}
