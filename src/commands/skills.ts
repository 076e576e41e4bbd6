/**
 * `/cairn pin|unpin|archive|restore <skill>`: an admin keeping the team's skill library. Each change
 * is a revision with who did it; archive is the strongest (nothing is deleted) and restore undoes it.
 * Bundled skills ship with cairn and are none of these commands' to change.
 */
import type { Inbound } from "../ground/types.ts";
import type { CommandReply } from "../ground/commands.ts";
import { scopeOf, type Place } from "../history/store/store.ts";
import type { Logger } from "../ground/log.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import { SkillError, type SkillStore } from "../skills/store.ts";

export type SkillCommand = "pin" | "unpin" | "archive" | "restore";

/** What the skill library commands need: the skills, and who is an admin. */
export interface SkillCommandDeps {
  skills: SkillStore;
  settings: { access: AccessPolicy };
  log: Logger;
}

export async function skillCommand(deps: SkillCommandDeps, inbound: Inbound, place: Place, name: SkillCommand, skillName: string | undefined): Promise<CommandReply> {
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    deps.log.info({ user: inbound.author.externalId, command: name }, "admin command refused");
    return { text: `Only cairn admins can ${name} skills.`, ephemeral: true, outcome: "refused" };
  }
  if (!skillName) return { text: `Usage: ${name} <skill-name>`, ephemeral: true };
  const scope = scopeOf(place);
  const prov = { source: "tool" as const, actorId: place.person.id, sourceMessageId: null, reason: `${name} by an admin` };
  const missing: CommandReply = { text: `No ${name === "restore" ? "archived " : ""}skill of this workspace is named \`${skillName}\`.`, ephemeral: true, outcome: "not_found" };
  switch (name) {
    case "pin":
    case "unpin": {
      const done = await deps.skills.setPinned(scope, skillName, name === "pin", prov);
      return done ? { text: `${name === "pin" ? "Pinned" : "Unpinned"} \`${skillName}\`.`, ephemeral: true, outcome: "done" } : missing;
    }
    case "archive": {
      const row = await deps.skills.unarchived(scope, skillName);
      // Another person's private skill is theirs alone, admins included.
      if (!row || (row.scope === "user" && row.ownerId !== place.person.id)) return { ...missing, text: `No active skill of this workspace is named \`${skillName}\` (bundled skills cannot be archived).` };
      // A channel's skill is archived from wherever the admin asks (the Home tab has no channel).
      const where = row.scope === "channel" && row.channelKey ? { ...scope, isDm: false, channelKey: row.channelKey } : scope;
      try {
        await deps.skills.archive(where, skillName, prov);
      } catch (err) {
        if (err instanceof SkillError) return { text: err.message, ephemeral: true, outcome: "refused" };
        throw err;
      }
      return { text: `Archived \`${skillName}\`: it is out of every prompt's skills index from the next session. \`restore ${skillName}\` brings it back.`, ephemeral: true, outcome: "done" };
    }
    case "restore": {
      const done = await deps.skills.restore(scope, skillName, prov);
      return done ? { text: `Restored \`${skillName}\`: active again from the next session.`, ephemeral: true, outcome: "done" } : missing;
    }
  }
}
