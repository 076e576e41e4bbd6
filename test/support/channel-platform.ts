/**
 * A platform for core-level tests of channel knowledge: channels with a history, members and posts
 * held in memory, behind the adapter contract's channel methods. The Slack and Discord adapters are
 * tested against their fake servers in their own suites; this one lets the core's rules (what is
 * kept, who finds it, resuming a backfill) be tested on their own.
 */
import type { Capabilities, PlatformAdapter, PostTarget, ReplyTarget } from "../../src/ground/adapter.ts";
import type { Platform } from "../../src/ground/types.ts";
import type { ChannelMessage, HistoryPage } from "../../src/ground/channel-events.ts";

const CAPS: Capabilities = { ephemeral: false, maxMessageLength: 40_000, maxMessageLines: Infinity, minEditIntervalMs: 0 };

export interface ChannelPlatform extends PlatformAdapter {
  /** Each channel's history, oldest first. */
  history: Map<string, ChannelMessage[]>;
  members: Map<string, Set<string>>;
  /** Who can read which channel (a `canRead` platform); absent: members are read with channelMembers. */
  readers: Map<string, Set<string>> | null;
  posts: { target: PostTarget; text: string }[];
  /** The cursors channelHistory was asked for, in order. */
  cursors: (string | null)[];
  /** Throws once when asked for the page after this many pages (a crash mid-backfill). */
  failAfterPages: number | null;
  message(channel: string, id: string, author: string, text: string, sentAt: Date, extra?: Partial<ChannelMessage>): ChannelMessage;
}

export function channelPlatform(platform: Platform, workspace: string, opts: { canRead?: boolean; pageSize?: number } = {}): ChannelPlatform {
  let pages = 0;
  const p: ChannelPlatform = {
    platform,
    capabilities: CAPS,
    history: new Map(),
    members: new Map(),
    readers: opts.canRead ? new Map() : null,
    posts: [],
    cursors: [],
    failAfterPages: null,
    render: (markdown) => markdown,
    async start() {},
    async stop() {},
    async open(target: PostTarget): Promise<ReplyTarget> {
      return {
        channelId: target.kind === "channel" ? target.channel : `D-${target.person}`,
        send: async (text) => {
          p.posts.push({ target, text });
          return `post-${p.posts.length}`;
        },
      };
    },
    message(channel, id, author, text, sentAt, extra = {}) {
      return { platform, workspace: { externalId: workspace }, channel, messageId: id, threadId: null, author: { externalId: author, displayName: author }, text, sentAt, link: `https://chat.example/${channel}/${id}`, ...extra };
    },
    async channelHistory(_ws, channel, page): Promise<HistoryPage> {
      p.cursors.push(page.cursor);
      if (p.failAfterPages !== null && pages >= p.failAfterPages) {
        p.failAfterPages = null;
        throw new Error("connection reset");
      }
      pages++;
      const size = opts.pageSize ?? page.limit;
      const all = [...(p.history.get(channel) ?? [])].filter((m) => m.sentAt >= page.oldest).reverse();
      const from = page.cursor ? Number(page.cursor) : 0;
      const messages = all.slice(from, from + size);
      return { messages, next: from + size < all.length ? String(from + size) : null };
    },
    async channelKind(_ws, channel) {
      return channel.startsWith("D") ? "dm" : channel.startsWith("G") ? "group_dm" : "channel";
    },
  };
  if (opts.canRead) {
    p.canRead = async (_ws, person, channels) => channels.filter((c) => p.readers?.get(c)?.has(person));
  } else {
    p.channelMembers = async (_ws, channel) => [...(p.members.get(channel) ?? [])];
  }
  return p;
}
