/**
 * The persona's changes in `/cairn history persona`, and `/cairn rollback <revision>` of one of them
 * (admins only, as setting it is): the text from before that change comes back exactly, as a new
 * revision, so a rollback can be rolled back in turn.
 */
import type { Inbound } from "../ground/types.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import type { CommandReply } from "../ground/commands.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import { nameOf } from "../learning/places.ts";
import type { PersonaStore } from "../persona/store.ts";
import type { Revision, RevisionStore } from "../revisions/revision-store.ts";
import { shortId, shortIds } from "../ground/short-id.ts";

/** What the persona's history needs (its revisions), and its rollback (the persona, and who is an admin). */
export interface PersonaHistoryDeps {
  revisions: RevisionStore;
  persona: PersonaStore;
  settings: { access: AccessPolicy };
}

const SHOWN = 20;
const glimpse = (s: string | null): string => (s === null ? "(none)" : `"${excerpt(s.replace(/\s+/g, " "), 80)}"`);

export async function personaHistory(deps: Pick<PersonaHistoryDeps, "revisions">, place: Place): Promise<CommandReply> {
  const scope = workspaceScopeOf(place);
  const revisions = await deps.revisions.ofPersona(scope, SHOWN);
  if (revisions.length === 0) return { text: "The team persona was never set here: cairn follows its built-in guidance alone.", ephemeral: true };
  const people = await deps.revisions.actors(scope, revisions);
  const short = shortIds(revisions.map((r) => r.id));
  const line = (r: Revision): string =>
    `- \`${short(r.id)}\` ${r.createdAt.toISOString().slice(0, 10)} **${r.action}** by ${r.actorId ? nameOf(people.get(r.actorId)) : r.source}${r.reason ? `: ${r.reason}` : ""} — ${glimpse(r.oldText)} → ${glimpse(r.newText)}`;
  return { text: ["**History of the team persona**", ...revisions.map(line), "`rollback <revision id>` brings back the text from before that change (cairn admins)."].join("\n"), ephemeral: true };
}

export async function personaRollback(deps: Pick<PersonaHistoryDeps, "persona" | "settings">, inbound: Inbound, place: Place, rev: Revision): Promise<CommandReply> {
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    return { text: "Only cairn admins can change the team persona, rollbacks included.", ephemeral: true, outcome: "refused" };
  }
  const prov = { source: "tool" as const, actorId: place.person.id, sourceMessageId: null, reason: `rollback of revision ${rev.id} (${rev.action})` };
  const change = await deps.persona.set(workspaceScopeOf(place), rev.oldText ?? "", prov);
  if (change.kind === "unchanged") return { text: `Nothing to roll back: the team persona is already as it was before revision ${shortId(rev.id)}.`, ephemeral: true, outcome: "done" };
  return { text: `Rolled back revision ${shortId(rev.id)} (${rev.action}) of the team persona: ${rev.oldText === null ? "none is set now" : "its earlier text is back, exactly"}. It applies from each conversation's next session.`, ephemeral: true, outcome: "done" };
}
