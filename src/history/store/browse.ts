/**
 * Reading history beyond a search (session_search's other modes): one session's messages in order,
 * the messages around one, the newest messages matching filters, and the asker's recent sessions.
 *
 * Invariant, as search's (search-queries.ts): every statement puts the asker's scope in its WHERE
 * clause (`visible`): their workspace, of its DMs only their own, of listened channels' knowledge only
 * the channels they can read now. A session or message outside it reads as none, exactly like an id
 * that does not exist. Filters only narrow what the scope lets through.
 */
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../db/generated/sqlite/client.ts";
import type { Scope } from "../../ground/types.ts";
import { sessionKey } from "./search.ts";
import { fold } from "../text.ts";
import { byConversationIds, CHANNEL_CONVERSATIONS, type HistoryFilter } from "./filter.ts";

export interface BrowsedMessage {
  id: number;
  /** The session as search groups it (search.ts sessionKey): a session id, or `<conversation>:<day>`. */
  sessionKey: string;
  conversationId: string;
  isDm: boolean;
  channelId: string;
  threadId: string | null;
  role: string;
  authorId: string | null;
  /** The author's display name, else platform id; null for cairn's own messages. */
  author: string | null;
  createdAt: Date;
  text: string;
  link: string | null;
}

export interface RecentSession {
  key: string;
  isDm: boolean;
  channelId: string;
  threadId: string | null;
  startedAt: Date;
  lastAt: Date;
  summary: string | null;
  /** The session's first message the filters let through: what it was about, when it has no summary. */
  first: BrowsedMessage;
}

export interface Page {
  messages: BrowsedMessage[];
  /** The cursor of the next page (the last message's id), null on the last page. */
  next: number | null;
}

export interface HistoryBrowse {
  /** One session's messages in order, `limit` after the cursor; null when it has none the asker may see. */
  session(scope: Scope, readable: readonly string[], key: string, cursor: number, limit: number, f: HistoryFilter): Promise<Page | null>;
  /** A message and up to `n` of its conversation's messages on each side; null when the asker may not see it. */
  around(scope: Scope, readable: readonly string[], id: number, n: number, f: HistoryFilter): Promise<{ before: BrowsedMessage[]; anchor: BrowsedMessage; after: BrowsedMessage[] } | null>;
  /** The newest messages matching the filters, newest first. */
  latest(scope: Scope, readable: readonly string[], f: HistoryFilter, limit: number): Promise<BrowsedMessage[]>;
  /**
   * The newest sessions with a message matching the filters (with neither author nor channel: one
   * the asker wrote), newest first, with their summaries; `exclude`: the session already in the prompt.
   */
  recent(scope: Scope, readable: readonly string[], f: HistoryFilter, limit: number, exclude: string | null): Promise<RecentSession[]>;
  /**
   * People named `name` (display name, one word of it, or platform id; any case or accents; "me") who wrote a
   * message the asker may see: nobody else, so a name says nothing of people the asker never met.
   */
  authorsNamed(scope: Scope, readable: readonly string[], name: string): Promise<string[]>;
  /**
   * The conversations of `channel` (it and its threads) the asker may read, when one has a message
   * they may see; else none: a channel they cannot read answers as one that does not exist. At most
   * CHANNEL_CONVERSATIONS + 1: with more, a filter given them reads the channel by its id.
   */
  channelConversations(scope: Scope, readable: readonly string[], channel: string): Promise<string[]>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Messages read back to find recent sessions (newest first): enough for a busy person's weeks. */
const RECENT_SCAN = 2000;

/** The conversations the asker may read: the same rule as search's and cited.ts's. */
function visibleConversation(scope: Scope, readable: readonly string[]): Prisma.ConversationWhereInput {
  return {
    workspaceId: scope.workspaceId,
    OR: [
      { kind: { not: "channel" }, isDm: false },
      { kind: { not: "channel" }, ownerId: scope.personId },
      { kind: "channel", channelId: { in: [...readable] } },
    ],
  };
}

/** The asker's scope as a Prisma filter on Message. */
function visible(scope: Scope, readable: readonly string[]): Prisma.MessageWhereInput {
  return {
    workspaceId: scope.workspaceId,
    status: { not: "failed" },
    // Context rows repeat a thread's earlier messages, stored (or kept) on their own already.
    role: { not: "context" },
    conversation: visibleConversation(scope, readable),
  };
}

/** The filter for Prisma: filter.ts's rules (`filterSql`), as search's statements write them. */
function narrowed(scope: Scope, f: HistoryFilter): Prisma.MessageWhereInput[] {
  const out: Prisma.MessageWhereInput[] = [];
  if (f.after || f.before) out.push({ createdAt: { ...(f.after ? { gte: f.after } : {}), ...(f.before ? { lt: f.before } : {}) } });
  if (f.authorIds) out.push({ authorId: { in: [...f.authorIds] } });
  if (f.channel === "dm") out.push({ conversation: { isDm: true, ownerId: scope.personId } });
  else if (byConversationIds(f)) out.push({ conversationId: { in: [...f.conversationIds] } });
  else if (f.channel !== undefined) out.push({ conversation: { channelId: f.channel } });
  return out;
}

const where = (scope: Scope, readable: readonly string[], f: HistoryFilter, ...more: Prisma.MessageWhereInput[]): Prisma.MessageWhereInput => ({
  AND: [visible(scope, readable), ...narrowed(scope, f), ...more],
});

const SELECT = {
  id: true,
  sessionId: true,
  conversationId: true,
  role: true,
  authorId: true,
  createdAt: true,
  text: true,
  link: true,
  conversation: { select: { isDm: true, channelId: true, threadId: true } },
  author: { select: { displayName: true, externalId: true } },
} satisfies Prisma.MessageSelect;

type Selected = Prisma.MessageGetPayload<{ select: typeof SELECT }>;

function browsed(r: Selected): BrowsedMessage {
  return {
    id: r.id,
    sessionKey: sessionKey(r.sessionId, r.conversationId, r.createdAt),
    conversationId: r.conversationId,
    isDm: r.conversation.isDm,
    channelId: r.conversation.channelId,
    threadId: r.conversation.threadId,
    role: r.role,
    authorId: r.authorId,
    author: r.role === "assistant" ? null : (r.author?.displayName ?? r.author?.externalId ?? null),
    createdAt: r.createdAt,
    text: r.text,
    link: r.link,
  };
}

/**
 * A session key's messages: a session id, or `<conversation id>:<UTC day number>` for messages no
 * session claimed (a listened channel's day), as search's results carry them.
 */
function sessionWhere(key: string): Prisma.MessageWhereInput | null {
  const m = /^([^:]+):(\d{1,7})$/.exec(key);
  if (!m) return key.length > 0 && !key.includes(":") ? { sessionId: key } : null;
  const day = Number(m[2]) * DAY_MS;
  return { conversationId: m[1]!, sessionId: null, createdAt: { gte: new Date(day), lt: new Date(day + DAY_MS) } };
}

/** Whether `name` (folded) names this person: their platform id, display name, or one word of it ("Lopez", "jose" for "José"). */
const named = (name: string, p: { displayName: string | null; externalId: string }): boolean => {
  const display = fold((p.displayName ?? "").trim()).replace(/\s+/g, " ");
  return p.externalId.toLowerCase() === name || display === name || (display !== "" && display.split(/\s+/).includes(name));
};

export function historyBrowse(db: Db): HistoryBrowse {
  const read = async (w: Prisma.MessageWhereInput, order: "asc" | "desc", take: number, by: "id" | "createdAt" = "id"): Promise<BrowsedMessage[]> =>
    (await db.message.findMany({ where: w, orderBy: by === "id" ? { id: order } : [{ createdAt: order }, { id: order }], take, select: SELECT })).map(browsed);
  return {
    async session(scope, readable, key, cursor, limit, f) {
      const of = sessionWhere(key);
      if (!of) return null;
      const rows = await read(where(scope, readable, f, of, { id: { gt: cursor } }), "asc", limit + 1);
      if (rows.length === 0) return null;
      return { messages: rows.slice(0, limit), next: rows.length > limit ? rows[limit - 1]!.id : null };
    },
    async around(scope, readable, id, n, f) {
      const [anchor] = await read(where(scope, readable, {}, { id }), "asc", 1);
      if (!anchor) return null;
      const same = { conversationId: anchor.conversationId };
      const [before, after] = await Promise.all([
        read(where(scope, readable, f, same, { id: { lt: id } }), "desc", n),
        read(where(scope, readable, f, same, { id: { gt: id } }), "asc", n),
      ]);
      return { before: before.reverse(), anchor, after };
    },
    async latest(scope, readable, f, limit) {
      return read(where(scope, readable, f), "desc", limit, "createdAt");
    },
    async recent(scope, readable, f, limit, exclude) {
      // Newest first over the (workspaceId, createdAt) index: the first row of a session met is its latest.
      const mine = f.authorIds || f.channel !== undefined ? [] : [{ authorId: scope.personId }];
      const notThis = exclude ? [{ sessionId: { not: exclude } }] : [];
      const rows = await db.message.findMany({
        where: where(scope, readable, f, { sessionId: { not: null } }, ...mine, ...notThis),
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: RECENT_SCAN,
        select: { sessionId: true, createdAt: true },
      });
      const latest = new Map<string, Date>();
      for (const r of rows) if (r.sessionId && !latest.has(r.sessionId) && latest.size < limit) latest.set(r.sessionId, r.createdAt);
      if (latest.size === 0) return [];
      const ids = [...latest.keys()];
      const [sessions, firsts] = await Promise.all([
        // Only ids just read through the scope: a session's summary is of its own conversation's messages.
        db.chatSession.findMany({ where: { id: { in: ids } }, select: { id: true, startedAt: true, summary: true } }),
        Promise.all(ids.map((sid) => read(where(scope, readable, f, { sessionId: sid }, ...mine), "asc", 1))),
      ]);
      const byId = new Map(sessions.map((s) => [s.id, s]));
      return ids.flatMap((sid, i) => {
        const first = firsts[i]![0];
        const s = byId.get(sid);
        if (!first || !s) return [];
        return [{ key: sid, isDm: first.isDm, channelId: first.channelId, threadId: first.threadId, startedAt: s.startedAt, lastAt: latest.get(sid)!, summary: s.summary, first }];
      });
    },
    async authorsNamed(scope, readable, name) {
      // A mention as written in the conversation: Slack's <@U123> or <@U123|name>, Discord's <@123> or <@!123>, or @name.
      const wanted = fold(name.trim().replace(/^<@!?|^@/, "").replace(/\|[^>]*>$|>$/, "").replace(/\s+/g, " "));
      if (!wanted) return [];
      if (wanted === "me" || wanted === "myself") return [scope.personId];
      const people = await db.person.findMany({ where: { workspaceId: scope.workspaceId }, select: { id: true, displayName: true, externalId: true } });
      const candidates = people.filter((p) => named(wanted, p));
      // Only those who wrote something the asker may see (one scoped look-up each: a name matches few).
      const wrote = await Promise.all(candidates.map((p) => db.message.findFirst({ where: where(scope, readable, {}, { authorId: p.id }), select: { id: true } })));
      return candidates.filter((_, i) => wrote[i] !== null).map((p) => p.id);
    },
    async channelConversations(scope, readable, channel) {
      // The channel's conversations first (a conversation exists once a message was stored in it, so
      // a hundred settle whether one has a message), then a message of theirs by its index: asked of
      // the messages alone, a name no channel has would scan the workspace's history.
      const ids = (await db.conversation.findMany({ where: { AND: [visibleConversation(scope, readable), { channelId: channel }] }, select: { id: true }, take: CHANNEL_CONVERSATIONS + 1 })).map((c) => c.id);
      if (ids.length === 0) return [];
      const any = await db.message.findFirst({ where: where(scope, readable, {}, { conversationId: { in: ids.slice(0, 100) } }), select: { id: true } });
      return any ? ids : [];
    },
  };
}
