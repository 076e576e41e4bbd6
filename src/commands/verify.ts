/**
 * `/cairn verify <id> [<id>…]` (and the views' *Still true*): a person says shared items still hold.
 * Any item they can see from here may be confirmed: team facts, rules and lessons, this channel's
 * (none from a DM), and team skills (by id or name); each gets the date and a "verify" revision.
 * An id they cannot see is answered as one that does not exist, so the answer tells nothing about
 * other channels or people. `verify` alone lists what is due here.
 */
import type { CommandReply } from "../ground/commands.ts";
import { scopeOf, workspaceScopeOf, type Place } from "../history/store/store.ts";
import type { Learning } from "../learning/learning.ts";
import { dueNote, itemText } from "../freshness/lines.ts";
import { shortIds } from "../ground/short-id.ts";

/** What verify needs: the freshness store, its windows and clock (the learning loop holds them). */
export interface VerifyDeps {
  learning: Pick<Learning, "freshness">;
}

/** Items listed by `verify` alone; the rest are counted. */
const LISTED = 20;

export async function verifyCommand(deps: VerifyDeps, place: Place, ids: readonly string[]): Promise<CommandReply> {
  const { store, settings, now } = deps.learning.freshness;
  if (ids.length === 0) return dueHere(deps, place);
  const confirmed = await store.verify(scopeOf(place), ids, { source: "tool", actorId: place.person.id, sourceMessageId: null, reason: "confirmed by a person", at: now() });
  const found = new Set(confirmed.flatMap((i) => [i.id, ...(i.name ? [i.name] : [])]));
  const missing = ids.filter((id) => !found.has(id));
  if (confirmed.length === 0) {
    return { text: `No shared item you can see here has the id ${ids.join(", ")}. \`verify\` lists what is due here; \`lessons\` and \`team\` list the rest.`, ephemeral: true, outcome: "not_found" };
  }
  const lines = [`Confirmed as still true (it shows no date for ${settings.verifyDays} days):`, ...confirmed.map((i) => `- ${itemText(i)}`)];
  if (missing.length) lines.push(`Not found here: ${missing.join(", ")}.`);
  return { text: lines.join("\n"), ephemeral: true, outcome: "done" };
}

/** The shared items due for confirmation that this place shows: the team's and this channel's. */
async function dueHere(deps: VerifyDeps, place: Place): Promise<CommandReply> {
  const { store, settings, now } = deps.learning.freshness;
  const channels = new Set(place.conversation.isDm ? [] : [place.conversation.channelId]);
  const due = await store.due(workspaceScopeOf(place), { now: now(), days: settings.verifyDays, limit: LISTED, channels });
  if (due.total === 0) return { text: `Nothing here has gone unconfirmed for ${settings.verifyDays} days.`, ephemeral: true };
  const more = due.total > due.items.length ? [`…and ${due.total - due.items.length} more.`] : [];
  const short = shortIds(due.items.map((i) => i.id));
  return {
    text: [`**Due for confirmation** (${due.total}; \`verify <id>\` if it still holds, \`forget <id>\` if not)`, ...due.items.map((i) => `- \`${short(i.id)}\` ${itemText(i)}  _(${dueNote(i)})_`), ...more].join("\n"),
    ephemeral: true,
  };
}
