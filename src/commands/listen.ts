/**
 * `/cairn listen on|off|status|exclude-me|include-me`.
 *
 * - on (admins, in a channel): cairn keeps the channel's messages from now on and reads back its
 *   history (`backfillDays`); it says so in the channel, once, in plain words. DMs and group DMs
 *   are never listened to.
 * - off (admins): nothing new is kept; what was kept stays, searchable by the channel's members,
 *   until retention or its deletion on the platform removes it. A tombstone records the off: `on`
 *   again means new messages only, from then on (the backfill reads nothing older, backfill.ts).
 *   Every memory provider is told to forget the channel (src/providers/).
 * - status: whether it listens, what it kept, how far the backfill got.
 * - exclude-me / include-me (anyone): leave one's own messages out of every listened channel of
 *   the workspace (those kept so far are removed at once), or let them be kept again: new ones
 *   only, as a tombstone keeps any backfill from reading back what they said before excluding.
 */
import type { Inbound, Platform } from "../ground/types.ts";
import type { PlatformAdapter, PostTarget } from "../ground/adapter.ts";
import type { Logger } from "../ground/log.ts";
import type { CommandReply } from "../ground/commands.ts";
import { personScopeOf, workspaceScopeOf, type Place } from "../history/store/store.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import type { ChannelKnowledge } from "../knowledge/knowledge.ts";
import type { Providers } from "../providers/providers.ts";

/**
 * What `listen` needs: the channel knowledge (its listens, what it kept, its members, its backfill),
 * the platform's adapter (can it tell who reads a channel, is a channel a DM), a channel post for the
 * announcement, and who is an admin.
 */
export interface ListenDeps {
  knowledge: Pick<ChannelKnowledge, "listens" | "store" | "readers" | "settings" | "queueBackfill"> & { deps: { now: () => Date } };
  delivery: { adapterOf(platform: Platform): Pick<PlatformAdapter, "canRead" | "channelKind"> | null };
  post(platform: Platform, target: PostTarget, markdown: string): Promise<unknown>;
  settings: { access: AccessPolicy };
  /** `listen off` tells every memory provider to forget the channel. */
  providers: Pick<Providers, "forget">;
  log: Logger;
}

const reply = (text: string, outcome?: CommandReply["outcome"]): CommandReply => ({ text, ephemeral: true, ...(outcome ? { outcome } : {}) });
const day = (d: Date | null): string => (d ? d.toISOString().slice(0, 10) : "-");

export const NEVER_IN_DMS = "I never listen in DMs or group DMs. Use `listen on` in a channel.";

export function announcement(backfillDays: number, retentionDays: number): string {
  const kept = retentionDays > 0 ? ` Messages are kept for ${retentionDays} days.` : "";
  return [
    `👂 **cairn now keeps this channel's messages** (and reads back the last ${backfillDays} days), so you can ask it what was said and decided here; its answers link to the messages they rest on.`,
    `Only people who can read this channel can find them: when you leave the channel, you stop finding them.${kept} Edits and deletions here are followed.`,
    "To leave your own messages out: `/cairn listen exclude-me`. Admins stop it with `/cairn listen off`.",
  ].join("\n");
}

export async function listenCommand(deps: ListenDeps, inbound: Inbound, place: Place, args: readonly string[]): Promise<CommandReply> {
  const sub = (args[0] ?? "status").toLowerCase();
  const k = deps.knowledge;
  const listens = k.listens;
  const workspace = place.workspace;
  const scope = workspaceScopeOf(place);
  const me = inbound.author.externalId;

  if (sub === "exclude-me" || sub === "include-me") {
    if (sub === "include-me") {
      await listens.include(scope, me);
      return reply("Your messages in listened channels are kept again from now on (what was removed stays removed).", "done");
    }
    await listens.exclude(scope, me, place.person.id);
    const removed = await k.store.removeAuthor(personScopeOf(place));
    deps.log.info({ person: place.person.id, removed }, "person excluded from channel knowledge");
    return reply(`Done: I removed ${removed} of your messages from what I keep of this workspace's channels, and I won't keep yours from now on. \`listen include-me\` undoes that.`, "done");
  }
  if (inbound.channel.isDm) return reply(NEVER_IN_DMS, "refused");
  const channel = inbound.channel.externalId;
  const current = await listens.listen(scope, channel);

  if (sub === "status") {
    if (!current) return reply("I don't listen in this channel. Admins can turn it on with `listen on`.");
    const [kept, members, excluded] = await Promise.all([
      k.store.count(workspace, channel),
      listens.memberCount(scope, channel),
      listens.isExcluded(scope, me),
    ]);
    const backfill =
      current.backfill === "done"
        ? `history read back to ${day(current.reachedAt)} (${current.backfilled} messages)`
        : current.backfill === "running"
          ? `reading its history: ${current.backfilled} messages so far, back to ${day(current.reachedAt)}`
          : "history not read";
    const retention = k.settings.retentionDays > 0 ? `; kept for ${k.settings.retentionDays} days` : "";
    return reply(
      [
        `**Listening here: ${current.status === "on" ? "on" : "off"}** (since ${day(current.enabledAt)})`,
        `- ${kept} messages kept; ${backfill}${retention}`,
        // Where roles decide (Discord), there is no member list to count.
        deps.delivery.adapterOf(inbound.platform)?.canRead ? "- everyone who can read this channel now can search them" : `- ${members} channel members can search them`,
        `- your own messages: ${excluded ? "left out (`listen include-me` to change)" : "kept (`listen exclude-me` to leave them out)"}`,
      ].join("\n"),
    );
  }
  if (sub !== "on" && sub !== "off") return reply("Usage: `listen on|off|status|exclude-me|include-me`.");
  if (!isAdmin(deps.settings.access, inbound.platform, me)) {
    deps.log.info({ user: me, sub }, "listen change refused");
    return reply("Only cairn admins can turn listening on or off in a channel.", "refused");
  }
  if (sub === "off") {
    if (!current || current.status === "off") return reply("I don't listen in this channel.", "done");
    await listens.switchOff(scope, channel, place.person.id);
    await deps.providers.forget(scope, { kind: "channel", platform: inbound.platform, channelId: channel });
    return reply("Stopped: I keep nothing new from this channel. What I kept stays searchable by its members until it is deleted here or passes the retention. Turned on again, I keep only messages posted from then on.", "done");
  }
  if (current?.status === "on") return reply("I already listen in this channel: `listen status` shows what I kept.", "done");
  const kind = await deps.delivery.adapterOf(inbound.platform)?.channelKind?.(inbound.workspace.externalId, channel);
  if (kind === "dm" || kind === "group_dm") return reply(NEVER_IN_DMS, "refused");
  const at = k.deps.now();
  const listen = await listens.switchOn(scope, channel, at, { personId: place.person.id, userId: me });
  if (!listen.announcedAt) {
    await deps.post(inbound.platform, { kind: "channel", workspace: inbound.workspace.externalId, channel }, announcement(k.settings.backfillDays, k.settings.retentionDays));
    await listens.markAnnounced(scope, channel, at);
  }
  await k.readers.refresh(workspace, channel);
  await k.queueBackfill(listen.id, at);
  deps.log.info({ channel, by: me, again: current?.status === "off" }, "listening turned on");
  // On again after an off: new messages only (the backfill reads nothing from before, backfill.ts).
  if (current?.status === "off") return reply("Listening in this channel from now on, new messages only: it was turned off before, so nothing said here until now is read back. `listen status` shows what I kept.", "done");
  return reply(`Listening in this channel from now on. I'm reading its last ${k.settings.backfillDays} days now and will tell you in a DM as it goes; \`listen status\` shows where it is.`, "done");
}
