/**
 * Who may talk to cairn, where, and who is an admin. Checked in the core for every message and
 * command, whatever the adapter, so no platform can forget it. Ids are platform-prefixed
 * ("slack:U123", "discord:456") because the same raw id could exist on two platforms.
 */
import type { Inbound, Platform } from "../ground/types.ts";

export interface AccessPolicy {
  admins: ReadonlySet<string>;
  allowedUsers: ReadonlySet<string>;
  allowedChannels: ReadonlySet<string>;
  allowedRoles: ReadonlySet<string>;
}

export const OPEN_POLICY: AccessPolicy = { admins: new Set(), allowedUsers: new Set(), allowedChannels: new Set(), allowedRoles: new Set() };

export function accessPolicy(lists: { admins: string[]; users: string[]; channels: string[]; roles: string[] }): AccessPolicy {
  return { admins: new Set(lists.admins), allowedUsers: new Set(lists.users), allowedChannels: new Set(lists.channels), allowedRoles: new Set(lists.roles) };
}

export const qualified = (platform: Platform, id: string) => `${platform}:${id}`;

export function isAdmin(policy: AccessPolicy, platform: Platform, userId: string): boolean {
  return policy.admins.has(qualified(platform, userId));
}

/** What someone cairn may not serve is told (adapters recognise these to treat them as non-answers). */
export const REFUSED_USER_TEXT = "Sorry, cairn isn't enabled for you here. Ask a cairn admin to add you.";
export const REFUSED_CHANNEL_TEXT = "Sorry, cairn isn't enabled in this channel. Ask a cairn admin, or talk to me in a DM.";

export type AccessVerdict = { ok: true } | { ok: false; reason: "user" | "channel"; text: string };

export function checkAccess(policy: AccessPolicy, inbound: Pick<Inbound, "platform" | "author" | "channel">): AccessVerdict {
  const { platform } = inbound;
  if (isAdmin(policy, platform, inbound.author.externalId)) return { ok: true };
  const userRule = policy.allowedUsers.size > 0 || policy.allowedRoles.size > 0;
  const userOk =
    !userRule ||
    policy.allowedUsers.has(qualified(platform, inbound.author.externalId)) ||
    (inbound.author.roles ?? []).some((r) => policy.allowedRoles.has(qualified(platform, r)));
  if (!userOk) {
    return { ok: false, reason: "user", text: REFUSED_USER_TEXT };
  }
  if (!inbound.channel.isDm && policy.allowedChannels.size > 0 && !policy.allowedChannels.has(qualified(platform, inbound.channel.externalId))) {
    return { ok: false, reason: "channel", text: REFUSED_CHANNEL_TEXT };
  }
  return { ok: true };
}
