/**
 * The persona's changes in `/cairn history persona`, and `/cairn rollback <revision>` of one of them
 * (admins only, as setting it is): the text from before that change comes back exactly, as a new
 * revision, so a rollback can be rolled back in turn.
 */
import type { Core } from "../core/core.ts";
import type { Inbound } from "../ground/types.ts";
import type { Place } from "../history/store/store.ts";
import type { CommandReply } from "../ground/commands.ts";
import type { Revision } from "../db/generated/sqlite/client.ts";
import { isAdmin } from "../admission/access.ts";
import { excerpt } from "../learning/lesson-case.ts";

const SHOWN = 20;
const glimpse = (s: string | null): string => (s === null ? "(none)" : `"${excerpt(s.replace(/\s+/g, " "), 80)}"`);

export async function personaHistory(core: Core, place: Place): Promise<CommandReply> {
  const db = core.learning.ctx.db;
  const revisions = await db.revision.findMany({ where: { workspaceId: place.workspace.id, entityType: "persona", entityId: place.workspace.id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: SHOWN });
  if (revisions.length === 0) return { text: "The team persona was never set here: cairn follows its built-in guidance alone.", ephemeral: true };
  const ids = [...new Set(revisions.flatMap((r) => (r.actorId ? [r.actorId] : [])))];
  const people = new Map((await db.person.findMany({ where: { id: { in: ids }, workspaceId: place.workspace.id } })).map((p) => [p.id, p.displayName ?? p.externalId]));
  const line = (r: Revision): string =>
    `- \`${r.id}\` ${r.createdAt.toISOString().slice(0, 10)} **${r.action}** by ${r.actorId ? (people.get(r.actorId) ?? "someone") : r.source}${r.reason ? `: ${r.reason}` : ""} — ${glimpse(r.oldText)} → ${glimpse(r.newText)}`;
  return { text: ["**History of the team persona**", ...revisions.map(line), "`rollback <revision id>` brings back the text from before that change (cairn admins)."].join("\n"), ephemeral: true };
}

export async function personaRollback(core: Core, inbound: Inbound, place: Place, rev: Revision): Promise<CommandReply> {
  if (!isAdmin(core.settings.access, inbound.platform, inbound.author.externalId)) {
    return { text: "Only cairn admins can change the team persona, rollbacks included.", ephemeral: true, outcome: "refused" };
  }
  const prov = { source: "tool" as const, actorId: place.person.id, sourceMessageId: null, reason: `rollback of revision ${rev.id} (${rev.action})` };
  const change = await core.persona.set(place.workspace.id, rev.oldText ?? "", prov);
  if (change.kind === "unchanged") return { text: `Nothing to roll back: the team persona is already as it was before revision ${rev.id}.`, ephemeral: true, outcome: "done" };
  return { text: `Rolled back revision ${rev.id} (${rev.action}) of the team persona: ${rev.oldText === null ? "none is set now" : "its earlier text is back, exactly"}. It applies from each conversation's next session.`, ephemeral: true, outcome: "done" };
}
