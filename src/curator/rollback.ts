/**
 * `/cairn rollback <revision id>`: undoes one revision (undo.ts) of a skill or memory entry of this
 * workspace, the curator's or anyone's, as a new revision (source tool, the person, "rollback of
 * revision <id>"), so a rollback can be rolled back in turn.
 *
 * Who may: cairn admins, and the owner of a private item (their own skill or profile entry).
 * Bundled skills are read-only (their revisions belong to no workspace). Restoring an item also
 * gives it a full period before the curator considers it unused again (policy.ts `lastSeen`).
 */
import type { Core } from "../core/core.ts";
import type { Inbound } from "../ground/types.ts";
import type { Place } from "../history/store/store.ts";
import type { CommandReply } from "../ground/commands.ts";
import { isAdmin } from "../admission/access.ts";
import { writeRevision, type Provenance, type Tx } from "../db/revisions.ts";
import { parseSkillMd } from "../skills/skillmd.ts";
import { hashOf } from "../skills/store.ts";
import { itemOf, ownerOf, type Item } from "./items.ts";
import { undoOf, type Undo } from "./undo.ts";
import { personaRollback } from "../persona/history.ts";

const reply = (text: string): CommandReply => ({ text, ephemeral: true });

export async function rollbackCommand(core: Core, inbound: Inbound, place: Place, revisionId: string | undefined): Promise<CommandReply> {
  if (!revisionId) return reply("Usage: `rollback <revision id>` (ids are listed by `history <skill or entry>`).");
  const { db, now } = core.learning.ctx;
  const workspaceId = place.workspace.id;
  const rev = await db.revision.findFirst({ where: { id: revisionId, workspaceId } });
  if (!rev) return reply(`No revision of this workspace has the id ${revisionId}. \`history <skill or entry>\` lists them (bundled skills are read-only).`);
  if (rev.entityType === "persona") return personaRollback(core, inbound, place, rev);
  const item = await itemOf(db, workspaceId, rev);
  if (!item) return reply("The item that revision changed is gone (erased at its owner's request); there is nothing to roll back.");
  const admin = isAdmin(core.settings.access, inbound.platform, inbound.author.externalId);
  const owner = ownerOf(item);
  if (!admin && owner !== place.person.id) {
    core.log.info({ person: place.person.id, revision: rev.id }, "rollback refused");
    return reply(owner ? "Only that item's owner or a cairn admin can roll it back." : "Only cairn admins can roll back shared skills and entries; your own private ones you can roll back yourself.");
  }
  const undo = undoOf(rev);
  if (!undo.ok) return reply(`Revision ${rev.id} cannot be rolled back: ${undo.why}.`);
  if (item.type === "memory" && undo.status === "active" && item.row.replacesId !== null) {
    return reply("That entry is a proposed change waiting for confirmation; confirm it with `confirm`, or let it be.");
  }
  const prov: Provenance = { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: `rollback of revision ${rev.id} (${rev.action})`, at: now() };
  const newId = await db.$transaction((tx) => (item.type === "skill" ? undoSkill(tx, item.row, undo, prov) : undoEntry(tx, item.row, undo, prov)));
  core.skills.forgetCached();
  core.memory.forgetCached();
  core.log.info({ person: place.person.id, revision: rev.id, undo: newId }, "revision rolled back");
  const what = item.type === "skill" ? `skill \`${item.row.name}\`` : `entry \`${item.row.id}\``;
  if (!newId) return reply(`Nothing to roll back: ${what} is already as it was before revision ${rev.id}.`);
  return reply(`Rolled back revision ${rev.id} (${rev.action}) of ${what}: ${done(undo)}. This was recorded as revision ${newId}; \`rollback ${newId}\` undoes it.`);
}

function done(undo: Extract<Undo, { ok: true }>): string {
  if (undo.status) return `it is ${undo.status} again`;
  if (undo.file) return undo.file.content === null ? `the file ${undo.file.path} it added is removed (its text stays in the history)` : `the file ${undo.file.path} has its earlier text again`;
  if (undo.clearFlag) return "its flag is cleared";
  if (undo.pinned !== undefined) return undo.pinned ? "it is pinned again" : "it is unpinned";
  return "its earlier text is back, exactly";
}

type Ok = Extract<Undo, { ok: true }>;
type SkillRow = Extract<Item, { type: "skill" }>["row"];
type EntryRow = Extract<Item, { type: "memory" }>["row"];

/** Applies the undo to a skill; the new revision's id, or null when there was nothing to change. */
async function undoSkill(tx: Tx, skill: SkillRow, undo: Ok, prov: Provenance): Promise<string | null> {
  const rev = (oldText: string | null, newText: string | null, path: string | null = null) =>
    writeRevision(tx, { workspaceId: skill.workspaceId, entityType: "skill", entityId: skill.id, action: undo.action, path, oldText, newText }, prov);
  const files = await tx.skillFile.findMany({ where: { skillId: skill.id } });
  if (undo.status) {
    if (skill.status === undo.status) return null;
    await tx.skill.update({ where: { id: skill.id }, data: { status: undo.status } });
    return rev(null, null);
  }
  if (undo.pinned !== undefined) {
    if (skill.pinned === undo.pinned) return null;
    await tx.skill.update({ where: { id: skill.id }, data: { pinned: undo.pinned } });
    return rev(null, null);
  }
  if (undo.file) {
    const { path, content } = undo.file;
    const cur = files.find((f) => f.path === path) ?? null;
    if ((cur?.content ?? null) === content) return null;
    if (content === null) await tx.skillFile.delete({ where: { id: cur!.id } });
    else if (cur) await tx.skillFile.update({ where: { id: cur.id }, data: { content } });
    else await tx.skillFile.create({ data: { skillId: skill.id, path, content } });
    const after = [...files.filter((f) => f.path !== path), ...(content === null ? [] : [{ path, content }])];
    await tx.skill.update({ where: { id: skill.id }, data: { contentHash: hashOf(skill.content, after) } });
    return rev(cur?.content ?? null, content, path);
  }
  if (undo.text === undefined || undo.text === skill.content) return null;
  const parsed = parseSkillMd(undo.text);
  await tx.skill.update({
    where: { id: skill.id },
    data: { content: undo.text, contentHash: hashOf(undo.text, files), ...(parsed.ok ? { description: parsed.skill.description } : {}) },
  });
  return rev(skill.content, undo.text);
}

async function undoEntry(tx: Tx, entry: EntryRow, undo: Ok, prov: Provenance): Promise<string | null> {
  const rev = (oldText: string | null, newText: string | null, reason = prov.reason) =>
    writeRevision(tx, { workspaceId: entry.workspaceId, entityType: "memory", entityId: entry.id, action: undo.action, oldText, newText }, { ...prov, reason });
  if (undo.status) {
    if (entry.status === undo.status || undo.status === "stale") return null;
    await tx.memoryEntry.update({ where: { id: entry.id }, data: { status: undo.status } });
    return rev(null, null);
  }
  if (undo.clearFlag) {
    if (entry.flag === null) return null;
    await tx.memoryEntry.update({ where: { id: entry.id }, data: { flag: null } });
    return rev(null, null, `${prov.reason}; the flag was: ${entry.flag}`);
  }
  if (undo.text === undefined || undo.text === entry.text) return null;
  // Re-checked against the current injection rules when next shown (displayEntry), as any older entry.
  await tx.memoryEntry.update({ where: { id: entry.id }, data: { text: undo.text, scannedWith: null } });
  return rev(entry.text, undo.text);
}
