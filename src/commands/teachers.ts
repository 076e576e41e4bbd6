/**
 * `/cairn teachers add|remove|list <user>` (admins): the workspace's trusted teachers, whose team
 * writes reach the whole workspace at once instead of waiting for a teammate's approval
 * (admission/trust.ts). CAIRN_TEACHERS names more at start-up; those are listed, not removable here.
 */
import type { Inbound } from "../ground/types.ts";
import type { CommandReply } from "../ground/commands.ts";
import type { Logger } from "../ground/log.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import type { TeacherStore } from "../admission/teacher-store.ts";
import type { TeamTrust, TeamWriteSettings } from "../admission/trust.ts";

export interface TeachersDeps {
  teachers: TeacherStore;
  trust: Pick<TeamTrust, "mode">;
  settings: { access: AccessPolicy; teamWrites?: Partial<TeamWriteSettings> };
  log: Logger;
}

const USAGE = "Usage: `teachers list`, `teachers add <user>`, `teachers remove <user>` (a mention or a platform user id; admins).";

/**
 * The platform user id in a mention as both Slack and Discord write it in command text (`<@U123>`,
 * `<@!123>`, `<@U123|name>`), a platform-prefixed id (`slack:U123`), or a bare id.
 */
export function userIdOf(word: string, platform: string): string | null {
  const mention = /^<@!?([A-Za-z0-9]+)(?:\|[^>]*)?>$/.exec(word);
  if (mention) return mention[1]!;
  const bare = word.startsWith(`${platform}:`) ? word.slice(platform.length + 1) : word.replace(/^@/, "");
  return /^[A-Za-z0-9._-]{1,64}$/.test(bare) ? bare : null;
}

export async function teachersCommand(deps: TeachersDeps, inbound: Inbound, place: Place, args: readonly string[]): Promise<CommandReply> {
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    return { text: "Only cairn admins can name trusted teachers.", ephemeral: true, outcome: "refused" };
  }
  const scope = workspaceScopeOf(place);
  const [action = "list", who] = args;
  if (action === "list") {
    const stored = (await deps.teachers.list(scope)).map((t) => `- <@${t.userId}> (since ${t.createdAt.toISOString().slice(0, 10)})`);
    const prefix = `${inbound.platform}:`;
    const fromEnv = (deps.settings.teamWrites?.teachers ?? []).filter((t) => t.startsWith(prefix)).map((t) => `- <@${t.slice(prefix.length)}> (CAIRN_TEACHERS)`);
    const mode =
      deps.trust.mode === "open"
        ? "CAIRN_TEAM_WRITES=open: everyone's team writes reach the whole workspace at once."
        : "Team writes of everyone else stay where they were said until a teammate approves them; admins are trusted too.";
    return { text: [`**Trusted teachers** (${stored.length + fromEnv.length})`, ...(stored.length + fromEnv.length ? [...stored, ...fromEnv] : ["- (none)"]), mode].join("\n"), ephemeral: true };
  }
  if (action !== "add" && action !== "remove") return { text: USAGE, ephemeral: true };
  const userId = who ? userIdOf(who, inbound.platform) : null;
  if (!userId) return { text: USAGE, ephemeral: true };
  const changed = action === "add" ? await deps.teachers.add(scope, userId, place.person.id) : await deps.teachers.remove(scope, userId);
  deps.log.info({ teacher: userId, action, changed, by: place.person.id }, "trusted teachers changed");
  if (action === "add") {
    return { text: changed ? `<@${userId}> is a trusted teacher: what they ask cairn to remember for the team reaches the whole workspace at once.` : `<@${userId}> is a trusted teacher already.`, ephemeral: true, outcome: changed ? "done" : "not_found" };
  }
  return { text: changed ? `<@${userId}> is no longer a trusted teacher: their team writes wait for a teammate's approval again.` : `<@${userId}> was not a trusted teacher${deps.settings.teamWrites?.teachers?.includes(`${inbound.platform}:${userId}`) ? " here (CAIRN_TEACHERS names them: change it there)" : ""}.`, ephemeral: true, outcome: changed ? "done" : "not_found" };
}
