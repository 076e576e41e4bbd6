/**
 * Channel knowledge at the boundary: what a platform tells the core about the channels cairn
 * listens in (messages, edits, deletions, who joins and leaves), and what the core asks of a
 * platform (a page of a channel's history, its members, who can read what). Adapters fill these
 * from their events; the core decides what is kept (src/knowledge/).
 */
import type { Platform } from "./types.ts";

/** One message of a channel, live or read back from its history. */
export interface ChannelMessage {
  platform: Platform;
  workspace: { externalId: string };
  channel: string;
  /** The platform's id (Slack ts, Discord snowflake). */
  messageId: string;
  /** The thread it is a reply in (Slack thread_ts, Discord thread id); null in the channel itself. */
  threadId: string | null;
  author: { externalId: string; displayName?: string; isBot?: boolean };
  text: string;
  sentAt: Date;
  /** Where people open it: a Slack permalink, a Discord message URL. */
  link: string;
}

interface ChannelPlace {
  platform: Platform;
  workspace: { externalId: string };
  channel: string;
}

/** What happened in a channel; adapters send every one, the core keeps those of listened channels. */
export type ChannelEvent =
  | { kind: "message"; message: ChannelMessage }
  | (ChannelPlace & { kind: "edit"; messageId: string; text: string })
  | (ChannelPlace & { kind: "delete"; messageId: string })
  | (ChannelPlace & { kind: "member"; user: string; joined: boolean });

/** A page of a channel's history, newest first; `next` continues it (null: no older messages). */
export interface HistoryPage {
  messages: ChannelMessage[];
  next: string | null;
}
