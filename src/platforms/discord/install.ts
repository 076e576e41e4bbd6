/**
 * What a guild must grant cairn, and the invite URL that asks for it. Kept in code (not only in
 * docs) so a test pins the permissions integer the docs print, and the register script can show
 * the URL for the application it just registered.
 */
import { OAuth2Scopes, PermissionFlagsBits, PermissionsBitField } from "discord.js";

/**
 * Only what the adapter uses:
 * - ViewChannel: see the channels and threads it is asked in;
 * - SendMessages / SendMessagesInThreads: answer in channels / in threads;
 * - ReadMessageHistory: a reply that references a message needs it, and so does the lookup of a
 *   thread's recent messages after a restart;
 * - UseApplicationCommands: `/cairn` (listed so the invite shows the command is part of the bot).
 * Not asked: Add Reactions (cairn reads reactions, which needs no permission, and adds none),
 * Create Public Threads (cairn answers in place rather than opening threads), Message Content is an
 * intent, not a permission.
 */
export const REQUIRED_PERMISSIONS: bigint = new PermissionsBitField([
  PermissionFlagsBits.ViewChannel,
  PermissionFlagsBits.SendMessages,
  PermissionFlagsBits.SendMessagesInThreads,
  PermissionFlagsBits.ReadMessageHistory,
  PermissionFlagsBits.UseApplicationCommands,
]).bitfield;

export const INVITE_SCOPES = [OAuth2Scopes.Bot, OAuth2Scopes.ApplicationsCommands] as const;

export function inviteUrl(applicationId: string): string {
  const params = new URLSearchParams({ client_id: applicationId, scope: INVITE_SCOPES.join(" "), permissions: REQUIRED_PERMISSIONS.toString() });
  // %20, not URLSearchParams' "+", between scopes: the form Discord's own URL generator prints.
  return `https://discord.com/oauth2/authorize?${params.toString().replace(/\+/g, "%20")}`;
}
