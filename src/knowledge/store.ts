/**
 * Channel knowledge: the messages of channels cairn listens in, kept so people can ask what was
 * said and decided there. Stored as messages (role "channel", with their link) in one conversation
 * of kind "channel" per listened channel, so the one search (src/history/store/search.ts) ranks them
 * beside history; that search shows them only to people who can read the channel now (members.ts).
 *
 * What is kept: people's messages with visible text, in channels whose listening is on, from people
 * who did not opt out (`listen exclude-me`). Never DMs (the listen command refuses them), never bots.
 * An edit replaces the text (the search finds the new words, not the old); a deletion removes the
 * row; `forget me` and `exclude-me` remove a person's rows; retention removes old ones.
 *
 * Statements take the direct path (db/direct.ts): a backfill writes thousands of rows a minute.
 * Where cairn listens, and who opted out, is listen-store.ts's.
 */
import type { Database } from "../db/client.ts";
import type { Conversation, Workspace } from "../db/generated/sqlite/client.ts";
import { sqlTime, type SqlParam } from "../db/direct.ts";
import { workspaceScope } from "../db/scopes.ts";
import type { HistoryStore } from "../history/store/store.ts";
import type { PersonScope } from "../ground/types.ts";
import type { ListenStore } from "./listen-store.ts";
import { hasVisibleText, storable, withinLimit } from "../ground/text.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import type { ChannelMessage } from "../ground/channel-events.ts";

export const KNOWLEDGE_ROLE = "channel";
/**
 * Rows per INSERT, largest first: 100 x 9 parameters stays far below either database's limit, and
 * three statement shapes are all the direct path has to keep prepared.
 */
const BATCHES = [100, 10, 1] as const;

const COLUMNS = ["workspaceId", "conversationId", "authorId", "role", "text", "platformId", "status", "createdAt", "link"] as const;

/** The knowledge conversation's key: one per listened channel. */
export const knowledgeKey = (platform: string, workspace: string, channel: string): string => `${platform}:${workspace}:listen:${channel}`;

export class KnowledgeStore {
  private readonly people = new TtlCache<string, string>({ ttlMs: 10 * 60_000, max: 20_000 });
  private readonly conversations = new TtlCache<string, Conversation>({ ttlMs: 10 * 60_000, max: 5_000 });

  constructor(
    private readonly database: Database,
    private readonly history: HistoryStore,
    private readonly listens: ListenStore,
    private readonly maxChars: number,
  ) {}

  private get db() {
    return this.database.prisma;
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

  private async personId(workspace: Workspace, author: ChannelMessage["author"]): Promise<string> {
    return this.people.load(`${workspace.id}:${author.externalId}`, async () => (await this.history.person(workspaceScope(workspace), author)).id);
  }

  /**
   * Keeps messages of one channel (live or a backfill page) whether or not listening is on (the
   * caller checks); returns how many were new. Bots, opted-out people and empty texts are left out;
   * a message kept already (a redelivery, an overlapping page) is not kept twice.
   */
  async keep(workspace: Workspace, channel: string, messages: readonly ChannelMessage[]): Promise<number> {
    const out = await this.listens.excluded(workspaceScope(workspace));
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
        const authorId = await this.personId(workspace, m.author);
        params.push(workspace.id, conversation.id, authorId, KNOWLEDGE_ROLE, this.text(m.text), m.messageId, "kept", sqlTime(provider, m.sentAt), m.link);
      }
      const rows = await this.database.direct.scan(insertSql(provider, batch.length), params);
      added += rows.length;
    }
    return added;
  }

  private text(raw: string): string {
    return withinLimit(storable(raw), this.maxChars).text;
  }

  /**
   * An edit: the kept message's text becomes the new one (its old words stop matching, and its
   * vectors, made of the old text, go: the embeddings backfill makes new ones).
   */
  async edit(workspace: Workspace, channel: string, messageId: string, text: string): Promise<boolean> {
    const conversation = await this.existing(workspace, channel);
    if (!conversation) return false;
    const where = { conversationId: conversation.id, platformId: messageId, role: KNOWLEDGE_ROLE };
    const [r] = await this.db.$transaction([this.db.message.updateMany({ where, data: { text: this.text(text) } }), this.db.messageVector.deleteMany({ where: { message: where } })]);
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
  async removeAuthor(person: PersonScope): Promise<number> {
    const r = await this.db.message.deleteMany({ where: { workspaceId: person.workspaceId, authorId: person.personId, role: KNOWLEDGE_ROLE } });
    return r.count;
  }

  /** How many messages of the channel are kept. */
  async count(workspace: Workspace, channel: string): Promise<number> {
    const conversation = await this.existing(workspace, channel);
    return conversation ? this.db.message.count({ where: { conversationId: conversation.id, role: KNOWLEDGE_ROLE } }) : 0;
  }

  /** Retention: kept messages sent before `before` go, in small batches (a long delete would hold SQLite's writer). */
  async purgeBefore(before: Date): Promise<number> {
    let removed = 0;
    for (const { workspaceId } of await this.listens.listeningWorkspaces()) {
      for (;;) {
        const old = await this.db.message.findMany({ where: { workspaceId, role: KNOWLEDGE_ROLE, createdAt: { lt: before } }, select: { id: true }, take: 1_000 });
        if (old.length === 0) break;
        removed += (await this.db.message.deleteMany({ where: { id: { in: old.map((m) => m.id) }, role: KNOWLEDGE_ROLE } })).count;
      }
    }
    return removed;
  }

  /**
   * PostgreSQL plans the searches from table statistics: after a big backfill they describe a
   * table without it until autovacuum gets to it. Refreshes them now (SQLite keeps none).
   */
  async refreshStatistics(): Promise<void> {
    if (this.database.provider === "postgresql") await this.db.$executeRawUnsafe(`ANALYZE "Message"`);
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
