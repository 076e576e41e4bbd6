/**
 * CAIRN_REPORT_CHANNEL: where the weekly report is posted. `slack:C0123` (a Slack channel id),
 * `discord:123456789` (a Discord channel id) or `console`. Unset: reports are stored only.
 *
 * A channel belongs to one workspace, and only that workspace's report is posted there (every
 * workspace's is stored, for `/cairn report`). The workspace is the one whose stored conversations
 * are in that channel; when cairn has never seen the channel, the single workspace of the platform
 * (Discord DM pseudo-workspaces aside); when there are several, nothing is posted (logged).
 */
import type { PostTarget } from "../ground/adapter.ts";
import type { Platform } from "../ground/types.ts";
import type { ReportChannel } from "../learning/settings.ts";
import type { ReportStore, ReportWorkspace, Workspace } from "./report-store.ts";


/** What config.ts accepts (the variable's whole value). */
export const REPORT_CHANNEL_PATTERN = /^(?:slack:[CG][A-Z0-9]+|discord:\d{1,20}|console)$/;
export const REPORT_CHANNEL_HINT = "expected slack:<channel id> (slack:C0123), discord:<channel id> (discord:123456789) or console";

/** The console's one channel (src/platforms/console/console.ts CONSOLE_CHANNEL). */
const CONSOLE_CHANNEL = "console";

export function parseReportChannel(value: string | undefined): ReportChannel | null {
  if (!value || !REPORT_CHANNEL_PATTERN.test(value)) return null;
  if (value === "console") return { platform: "console", channel: CONSOLE_CHANNEL };
  const [platform, channel] = value.split(":") as [Platform, string];
  return { platform, channel };
}

export function describeChannel(ch: ReportChannel): string {
  return ch.platform === "console" ? "console" : `${ch.platform}:${ch.channel}`;
}

/** The workspace the channel belongs to, or null when it cannot be told. */
export async function workspaceOfChannel(reports: ReportStore, ch: ReportChannel): Promise<ReportWorkspace | null> {
  const seen = await reports.ofChannel(ch.platform, ch.channel);
  if (seen) return seen;
  const teams = (await reports.ofPlatform(ch.platform)).filter((w) => !isDmWorkspace(w.workspace));
  return teams.length === 1 ? teams[0]! : null;
}

/** A Discord DM is a workspace of its own ("@dm:<user>"): one person's, never a team's channel. */
export function isDmWorkspace(ws: Pick<Workspace, "platform" | "externalId">): boolean {
  return ws.platform === "discord" && ws.externalId.startsWith("@dm:");
}

export function postTarget(ws: Workspace, ch: ReportChannel): PostTarget {
  return { kind: "channel", workspace: ws.externalId, channel: ch.channel };
}
