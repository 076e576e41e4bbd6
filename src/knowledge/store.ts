/**
 * Channel knowledge: the messages of channels cairn listens in, kept so people can ask what was
 * said and decided there. Stored as messages (role "channel", with their link) in one conversation
 * of kind "channel" per listened channel, so the one search (src/history/search.ts) ranks them
 * beside history; that search shows them only to people who can read the channel now (members.ts).
 *
 * What is kept: people's messages with visible text, in channels whose listening is on, from people
 * who did not opt out (`listen exclude-me`). Never DMs (the listen command refuses them), never bots.
 * An edit replaces the text (the search finds the new words, not the old); a deletion removes the
 * row; `forget me` and `exclude-me` remove a person's rows; retention removes old ones.
 *
 * Statements take the direct path (db/direct.ts): a backfill writes thousands of rows a minute.
 */
import type { Database } from "../db/client.ts";
import type { ChannelListen, Conversation, Workspace } from "../db/generated/sqlite/client.ts";
import { sqlTime, type SqlParam } from "../db/direct.ts";
import type { HistoryStore } from "../history/store/store.ts";
import { hasVisibleText, storable, withinLimit } from "../ground/text.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import type { ChannelMessage } from "../ground/channel-events.ts";

export const KNOWLEDGE_ROLE = "channel";
/**
 * Rows per INSERT, largest first: 100 x 9 parameters stays far below either database's limit, and
 * three statement shapes are all the direct path has to keep prepared.
 */
const BATCHES = [100, 10, 1] as const;
/** How long this process trusts what it read of listening and opt-outs (another replica's change shows within it). */
const STATE_TTL_MS = 5_000;

const COLUMNS = ["workspaceId", "conversationId", "authorId", "role", "text", "platformId", "status", "createdAt", "link"] as const;

/** The knowledge conversation's key: one per listened channel. */
export const knowledgeKey = (platform: string, workspace: string, channel: string): string => `${platform}:${workspace}:listen:${channel}`;

export class KnowledgeStore {
  private readonly listens: TtlCache<string, Map<string, ChannelListen>>;
  private readonly exclusions: TtlCache<string, Set<string>>;
  private readonly people = new TtlCache<string, string>({ ttlMs: 10 * 60_000, max: 20_000 });
  private readonly conversations = new TtlCache<string, Conversation>({ ttlMs: 10 * 60_000, max: 5_000 });

  constructor(
    private readonly database: Database,
    private readonly history: HistoryStore,
    private readonly maxChars: number,
  ) {
    this.listens = new TtlCache({ ttlMs: STATE_TTL_MS, max: 1_000 });
    this.exclusions = new TtlCache({ ttlMs: STATE_TTL_MS, max: 1_000 });
  }

  private get db() {
    return this.database.prisma;
  }

  /** The workspace's listened channels (any status), by channel id. */
  async listened(workspaceId: string): Promise<Map<string, ChannelListen>> {
    return this.listens.load(workspaceId, async () => new Map((await this.db.channelListen.findMany({ where: { workspaceId } })).map((l) => [l.channelId, l])));
  }

  async isListening(workspaceId: string, channel: string): Promise<boolean> {
    return (await this.listened(workspaceId)).get(channel)?.status === "on";
  }

  /** After this process changed listening or opt-outs: read them again. */
  changed(workspaceId: string): void {
    this.listens.delete(workspaceId);
    this.exclusions.delete(workspaceId);
  }

  private async excluded(workspaceId: string): Promise<Set<string>> {
    return this.exclusions.load(workspaceId, async () => new Set((await this.db.listenExclusion.findMany({ where: { workspaceId } })).map((e) => e.userId)));
  }

  /** The knowledge conversation of a channel, created on first use. */
  async conversationFor(workspace: Workspace, channel: string): Promise<Conversation> {
    const key = knowledgeKey(workspace.platform, workspace.externalId, channel);
    return this.conversations.load(key, async () => {
      const found = await this.db.conversation.findUnique({ where: { key } });
      if (found) return found;
      try {
        return await this.db.conversation.create({ data: { workspaceId: workspace.id, key, channelId: channel, threadId: null, isDm: false, ownerId: null, kind: "channel" } });
      } catch {
        // Another process created it first (the key is unique).
        return this.db.conversation.findUniqueOrThrow({ where: { key } });
      }
    });
  }

  /** The knowledge conversation if the channel has one; no row is created. */
  private async existing(workspace: Workspace, channel: string): Promise<Conversation | null> {
    const key = knowledgeKey(workspace.platform, workspace.externalId, channel);
    return this.conversations.get(key) ?? this.db.conversation.findUnique({ where: { key } });
  }

  private async personId(workspaceId: string, author: ChannelMessage["author"]): Promise<string> {
    return this.people.load(`${workspaceId}:${author.externalId}`, async () => (await this.history.person(workspaceId, author)).id);
  }

  /**
   * Keeps messages of one channel (live or a backfill page) whether or not listening is on (the
   * caller checks); returns how many were new. Bots, opted-out people and empty texts are left out;
   * a message kept already (a redelivery, an overlapping page) is not kept twice.
   */
  async keep(workspace: Workspace, channel: string, messages: readonly ChannelMessage[]): Promise<number> {
    const out = await this.excluded(workspace.id);
    const wanted = messages.filter((m) => !m.author.isBot && !out.has(m.author.externalId) && hasVisibleText(m.text));
    if (wanted.length === 0) return 0;
    const conversation = await this.conversationFor(workspace, channel);
    const provider = this.database.provider;
    let added = 0;
    for (let i = 0; i < wanted.length; ) {
      const size = BATCHES.find((b) => b <= wanted.length - i)!;
      const batch = wanted.slice(i, i + size);
      i += size;
      const params: SqlParam[] = [];
      for (const m of batch) {
        const authorId = await this.personId(workspace.id, m.author);
        params.push(workspace.id, conversation.id, authorId, KNOWLEDGE_ROLE, this.text(m.text), m.messageId, "kept", sqlTime(provider, m.sentAt), m.link);
      }
      const rows = await this.database.direct.rows(insertSql(provider, batch.length), params);
      added += rows.length;
    }
    return added;
  }

  private text(raw: string): string {
    return withinLimit(storable(raw), this.maxChars).text;
  }

  /** An edit: the kept message's text becomes the new one (its old words stop matching). */
  async edit(workspace: Workspace, channel: string, messageId: string, text: string): Promise<boolean> {
    const conversation = await this.existing(workspace, channel);
    if (!conversation) return false;
    const r = await this.db.message.updateMany({ where: { conversationId: conversation.id, platformId: messageId, role: KNOWLEDGE_ROLE }, data: { text: this.text(text) } });
    return r.count > 0;
  }

  /** A deletion on the platform: the kept message goes. */
  async remove(workspace: Workspace, channel: string, messageId: string): Promise<boolean> {
    const conversation = await this.existing(workspace, channel);
    if (!conversation) return false;
    const r = await this.db.message.deleteMany({ where: { conversationId: conversation.id, platformId: messageId, role: KNOWLEDGE_ROLE } });
    return r.count > 0;
  }

  /** A person's kept messages in a workspace go (exclude-me, forget me); how many. */
  async removeAuthor(workspaceId: string, personId: string): Promise<number> {
    const r = await this.db.message.deleteMany({ where: { workspaceId, authorId: personId, role: KNOWLEDGE_ROLE } });
    return r.count;
  }

  /** How many messages of the channel are kept. */
  async count(workspace: Workspace, channel: string): Promise<number> {
    const conversation = await this.existing(workspace, channel);
    return conversation ? this.db.message.count({ where: { conversationId: conversation.id, role: KNOWLEDGE_ROLE } }) : 0;
  }

  /** Retention: kept messages sent before `before` go, in small batches (a long delete would hold SQLite's writer). */
  async purgeBefore(before: Date): Promise<number> {
    const workspaces = [...new Set((await this.db.channelListen.findMany({ select: { workspaceId: true } })).map((l) => l.workspaceId))];
    let removed = 0;
    for (const workspaceId of workspaces) {
      for (;;) {
        const old = await this.db.message.findMany({ where: { workspaceId, role: KNOWLEDGE_ROLE, createdAt: { lt: before } }, select: { id: true }, take: 1_000 });
        if (old.length === 0) break;
        removed += (await this.db.message.deleteMany({ where: { id: { in: old.map((m) => m.id) }, role: KNOWLEDGE_ROLE } })).count;
      }
    }
    return removed;
  }
}

/** INSERT of `rows` knowledge messages; a message already kept in its conversation is skipped. Returns the new ids. */
function insertSql(provider: Database["provider"], rows: number): string {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  let n = 0;
  const values = Array.from({ length: rows }, () => `(${COLUMNS.map(() => (pg ? `$${++n}` : "?")).join(", ")})`).join(", ");
  return `INSERT INTO ${q("Message")} (${COLUMNS.map(q).join(", ")}) VALUES ${values} ON CONFLICT (${q("conversationId")}, ${q("platformId")}) DO NOTHING RETURNING id`;
}
