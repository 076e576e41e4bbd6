/**
 * `/cairn rollback <revision id>`: undoes one revision (revisions/undo.ts) of a skill or memory entry of this
 * workspace, the curator's or anyone's, as a new revision (source tool, the person, "rollback of
 * revision <id>"), so a rollback can be rolled back in turn.
 *
 * Who may: cairn admins, and the owner of a private item (their own skill or profile entry).
 * Bundled skills are read-only (their revisions belong to no workspace). Restoring an item also
 * gives it a full period before the curator considers it unused again (curator/policy.ts `lastSeen`).
 */
import type { Inbound } from "../ground/types.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import type { CommandReply } from "../ground/commands.ts";
import { isAdmin } from "../admission/access.ts";
import { ownerOf } from "../revisions/items.ts";
import type { Logger } from "../ground/log.ts";
import type { Provenance } from "../revisions/revision-store.ts";
import { undoOf, type Undo } from "../revisions/undo.ts";
import { ForgottenError } from "../revisions/revision-store.ts";
import { personaRollback, type PersonaHistoryDeps } from "./persona-history.ts";
import { shortId, shortIds } from "../ground/short-id.ts";

/** What `rollback` needs: the revisions (which undo), the persona for its own rollbacks, and who is an admin. */
export interface RollbackDeps extends PersonaHistoryDeps {
  log: Logger;
}

const reply = (text: string): CommandReply => ({ text, ephemeral: true });
const day = (d: Date): string => d.toISOString().slice(0, 10);

export async function rollbackCommand(deps: RollbackDeps, inbound: Inbound, place: Place, revisionId: string | undefined): Promise<CommandReply> {
  if (!revisionId) return reply("Usage: `rollback <revision id>` (ids are listed by `history <skill or entry>`).");
  const { revisions } = deps;
  const scope = workspaceScopeOf(place);
  const rev = await revisions.find(scope, revisionId);
  if (!rev) return reply(`No revision of this workspace has the id ${revisionId}. \`history <skill or entry>\` lists them (bundled skills are read-only).`);
  if (rev.entityType === "persona") return personaRollback(deps, inbound, place, rev);
  const item = await revisions.itemOf(scope, rev);
  if (!item) return reply("The item that revision changed is gone (erased at its owner's request); there is nothing to roll back.");
  const admin = isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId);
  const owner = ownerOf(item);
  if (!admin && owner !== place.person.id) {
    deps.log.info({ person: place.person.id, revision: rev.id }, "rollback refused");
    return reply(owner ? "Only that item's owner or a cairn admin can roll it back." : "Only cairn admins can roll back shared skills and entries; your own private ones you can roll back yourself.");
  }
  const undo = undoOf(rev);
  if (!undo.ok) return reply(`Revision ${shortId(rev.id)} cannot be rolled back: ${undo.why}.`);
  if (item.type === "memory" && undo.status === "active" && item.row.replacesId !== null) {
    return reply("That entry is a proposed change waiting for confirmation; confirm it with `confirm`, or let it be.");
  }
  const prov: Provenance = { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: `rollback of revision ${rev.id} (${rev.action})` };
  // Stamped with the store's clock (the `now` it was built with), as the other changes of this process.
  let newId: string | null;
  try {
    newId = await revisions.undo(item, undo, prov);
  } catch (err) {
    // Forgotten at a person's request: a rollback does not bring it back.
    if (err instanceof ForgottenError) return reply(`Revision ${shortId(rev.id)} cannot be rolled back: ${err.forgotten.kind === "entry" ? `this was forgotten on ${day(err.forgotten.at)} at a person's request; not restored` : err.message}.`);
    throw err;
  }
  deps.log.info({ person: place.person.id, revision: rev.id, undo: newId }, "revision rolled back");
  const short = shortIds([rev.id, item.row.id, ...(newId ? [newId] : [])]);
  const what = item.type === "skill" ? `skill \`${item.row.name}\`` : `entry \`${short(item.row.id)}\``;
  if (!newId) return reply(`Nothing to roll back: ${what} is already as it was before revision ${short(rev.id)}.`);
  return reply(`Rolled back revision ${short(rev.id)} (${rev.action}) of ${what}: ${done(undo)}. This was recorded as revision ${short(newId)}; \`rollback ${short(newId)}\` undoes it.`);
}

function done(undo: Extract<Undo, { ok: true }>): string {
  if (undo.status) return `it is ${undo.status} again`;
  if (undo.file) return undo.file.content === null ? `the file ${undo.file.path} it added is removed (its text stays in the history)` : `the file ${undo.file.path} has its earlier text again`;
  if (undo.clearFlag) return "its flag is cleared";
  if (undo.pinned !== undefined) return undo.pinned ? "it is pinned again" : "it is unpinned";
  return "its earlier text is back, exactly";
}
