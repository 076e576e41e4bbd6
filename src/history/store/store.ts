/**
 * Workspaces, people, conversations and every message. A message is stored before any work is done
 * on it, so a crash mid-turn loses nothing; the (conversation, platform id) unique key makes a
 * platform's retries and double deliveries (Slack's message + app_mention) land once.
 * The history store's folder: this store, its direct statements (rows.ts), the scopes made from its
 * rows (place.ts) and the search over its messages (search*.ts). Services import row types from here.
 */
import type { Database, Db } from "../../db/client.ts";
import { sqlTime, type DirectSql, type SqlParam } from "../../db/direct.ts";
import type { Provider } from "../../db/migrate.ts";
import { assistantRow, conversationOf, conversationParams, HISTORY_SQL, messageOf, personOf, personParams, workspaceOf, type HistorySql } from "./rows.ts";
import type { Conversation, Message, Person, Workspace } from "../../db/generated/sqlite/client.ts";
import { findOrCreate, isUniqueViolation } from "../../db/errors.ts";
import { cuid } from "../../db/cuid.ts";
import type { ConversationScope, Inbound, PersonScope, Platform, Scope, WorkspaceScope } from "../../ground/types.ts";
import { TtlCache } from "../../ground/cache/ttl-cache.ts";
import { workspaceScope } from "../../db/scopes.ts";
import { sortByTurn } from "../turns.ts";
import { conversationKey, type Lease, type Place } from "./place.ts";
import { searchMessages, type SearchHit, type SearchOptions } from "./search.ts";
import { citedMessages, type CitedMessage } from "./cited.ts";
import { historyBrowse, type HistoryBrowse } from "./browse.ts";
import { messageBatches, type MessageBatches } from "./message-batch.ts";
import { historyIndex, type HistoryIndex } from "./history-index-sqlite.ts";
import { deliveryWrites, type DeliveryWrite } from "./delivery-batch.ts";
import { placeBatches, placeInserts, type FindOrMake, type Insert, type PlaceBatches } from "./place-batch.ts";

export type { Conversation, Delivery, Message, Person, Workspace } from "../../db/generated/sqlite/client.ts";
export { conversationKey, personScopeOf, scopeOf, scopeOfDelivery, scopeOfPerson, scopeOfWorkspace, workspaceScopeOf, type Lease, type Place } from "./place.ts";
export { sortByTurn, turnOf } from "../turns.ts";
export type { SearchHit, SearchOptions } from "./search.ts";
export type { CitedMessage } from "./cited.ts";

export type HistoryMessage = Message & { author: Person | null };

/**
 * The rows a message resolves to are read on every message but change almost never (a display
 * name): they are reused for a minute. Bounded staleness is the point: another replica's rename or
 * erasure shows here within the TTL, and this process's own are applied at once (`forgetPerson`).
 */
const PLACE_TTL_MS = 60_000;
/** `lastMessageAt` is kept to the minute: writing it on every message of a busy channel buys nothing. */
const LAST_MESSAGE_RESOLUTION_MS = 60_000;

/**
 * Look-ups by a unique key use findFirst: Prisma sends findUnique through its batching loader, which
 * costs up to twice the CPU per call, and these run on every new place and every reaction.
 * The statements of every message (store it, read the session, store the reply) and the look-ups
 * of the place it comes from take the direct path (db/direct.ts; their SQL is in rows.ts).
 */
/** What an erased message's text becomes (erasure/erasure-store.ts): the row stays, so conversations stay consistent. */
export const ERASED_TEXT = "[erased at the author's request]";

export class HistoryStore {
  private readonly places = new TtlCache<string, Place>({ ttlMs: PLACE_TTL_MS, max: 10_000 });
  private readonly workspaces = new TtlCache<string, Workspace>({ ttlMs: PLACE_TTL_MS, max: 1_000 });
  /** People by id, for the names history shows (the same few people, message after message). */
  private readonly people = new TtlCache<string, Person>({ ttlMs: PLACE_TTL_MS, max: 10_000 });

  private readonly db: Db;
  private readonly direct: DirectSql;
  private readonly provider: Provider;
  private readonly sql: HistorySql;
  /** SQLite: the history index, told of messages stored; null on PostgreSQL (a generated column). */
  private readonly index: HistoryIndex | null;
  /** Messages and replies that arrive together are stored together (message-batch.ts). */
  private readonly batches: MessageBatches;
  /** Replies' posts recorded; on PostgreSQL, those posted together in one statement (delivery-batch.ts). */
  private readonly deliveries: DeliveryWrite;
  /** PostgreSQL: people and conversations new at the same moment are found or made together. */
  private readonly placeBatches: PlaceBatches | null;
  /** Their inserts after a find (SQLite: in one transaction with those made at the same moment). */
  private readonly placeInserts: { person: Insert; conversation: Insert };

  /**
   * `onConversationCreated` hears of each conversation this store creates, once it exists;
   * `byMessage`: created for a person's message (else for a post of cairn's own).
   */
  constructor(
    private readonly database: Database,
    private readonly onConversationCreated: (conversationId: string, byMessage: boolean) => void = () => {},
  ) {
    this.db = database.prisma;
    this.direct = database.direct;
    this.provider = database.provider;
    this.sql = HISTORY_SQL[database.provider];
    // SQLite's history index is written in batches (history-index-sqlite.ts): stored messages wait a moment for it.
    this.index = database.provider === "sqlite" ? historyIndex(this.direct) : null;
    this.batches = messageBatches(this.direct, this.sql, this.provider, () => this.index?.stored());
    this.deliveries = deliveryWrites(this.direct, this.sql.recordDeliveries, this.provider);
    this.placeBatches = placeBatches(this.direct, this.sql);
    this.placeInserts = placeInserts(this.direct, this.sql);
  }

  async resolve(inbound: Inbound): Promise<Place> {
    const cacheKey = `${conversationKey(inbound)}|${inbound.author.externalId}`;
    const place = await this.places.load(cacheKey, () => this.load(inbound));
    const name = inbound.author.displayName;
    if (!name || name === place.person.displayName) return place;
    const at = new Date();
    await this.direct.rows(this.sql.rename, [name, sqlTime(this.provider, at), place.person.id]);
    const renamed = { ...place, person: { ...place.person, displayName: name, updatedAt: at } };
    this.places.set(cacheKey, renamed);
    this.people.set(renamed.person.id, renamed.person);
    return renamed;
  }

  /** After a person's erasure: their rows are read afresh on their next message. */
  forgetPerson(personId: string): void {
    this.places.deleteWhere((p) => p.person.id === personId);
    this.people.delete(personId);
  }

  private async load(inbound: Inbound): Promise<Place> {
    const workspace = await this.workspaceOf(inbound.platform, inbound.workspace.externalId, inbound.workspace.name);
    // A new display name is written by resolve(), for loaded and cached rows alike.
    const person = this.person(workspaceScope(workspace), inbound.author);
    // A DM belongs to its person, whose row comes first; a channel's conversation does not depend on
    // who wrote, so both are found or made at once (on PostgreSQL, a round trip less for a new one).
    const conversation = inbound.channel.isDm
      ? person.then((p) => this.conversationOf(workspace.id, inbound, p.id, true))
      : this.conversationOf(workspace.id, inbound, null, true);
    const [who, where] = await Promise.all([person, conversation]);
    this.people.set(who.id, who);
    return { workspace, person: who, conversation: where };
  }

  /** The workspace row of a platform's team or guild, created on first sight (cached). */
  workspaceOf(platform: string, externalId: string, name?: string): Promise<Workspace> {
    return this.workspaces.load(`${platform}:${externalId}`, () =>
      findOrCreate(
        async () => {
          const [row] = await this.direct.rows(this.sql.workspace, [platform, externalId]);
          return row ? workspaceOf(row) : null;
        },
        () => this.db.workspace.create({ data: { platform, externalId, name: name ?? null } }),
      ),
    );
  }

  /** `ownerId`: the person a DM belongs to. */
  private async conversationOf(workspaceId: string, inbound: Inbound, ownerId: string | null, byMessage: boolean): Promise<Conversation> {
    const key = conversationKey(inbound);
    const now = new Date();
    const fresh = (): Conversation => ({
      id: cuid(),
      workspaceId,
      key,
      channelId: inbound.channel.externalId,
      threadId: inbound.channel.isDm ? null : inbound.threadId,
      isDm: inbound.channel.isDm,
      ownerId: inbound.channel.isDm ? ownerId : null,
      createdAt: now,
      lastMessageAt: now,
      kind: "chat",
      reviewedMemoryThrough: null,
      reviewedSkillsThrough: null,
    });
    const { row, made } = await this.findOrInsert(
      this.placeBatches?.conversation ?? null,
      async () => {
        const [found] = await this.direct.rows(this.sql.conversation, [key]);
        return found ? conversationOf(found) : null;
      },
      this.placeInserts.conversation,
      () => conversationParams(this.provider, fresh()),
      conversationOf,
    );
    if (made) this.onConversationCreated(row.id, byMessage);
    return row;
  }

  /**
   * Stores a person's message (in the session it arrived in, when known), under the lease of the
   * process that will answer it; null when this platform message was stored already (a retry, or
   * another replica's delivery of the same post: the one that stored it answers it).
   */
  async recordInbound(place: Place, inbound: Inbound, sessionId: string | null = null, lease: Lease | null = null): Promise<Message | null> {
    try {
      const msg = await this.batches.inbound({
        workspaceId: place.workspace.id,
        conversationId: place.conversation.id,
        sessionId,
        authorId: place.person.id,
        role: "user",
        text: inbound.text,
        platformId: inbound.messageId,
        status: "received",
        replyToId: null,
        createdAt: inbound.sentAt,
        leaseOwner: lease?.owner ?? null,
        leaseUntil: lease?.until ?? null,
        admitted: false,
        // The adapter's permalink (Inbound.link): what links back to the message later uses it.
        link: inbound.link ?? null,
      });
      if (!msg) return null;
      if (inbound.context?.trim()) await this.recordContext(place, sessionId, msg.id, inbound.context, inbound.sentAt);
      const last = place.conversation.lastMessageAt;
      if (!last || inbound.sentAt.getTime() - last.getTime() >= LAST_MESSAGE_RESOLUTION_MS) {
        await this.direct.rows(this.sql.touchConversation, [sqlTime(this.provider, inbound.sentAt), place.conversation.id]);
        // The cached place shares this object: the next message compares with the time just written.
        place.conversation.lastMessageAt = inbound.sentAt;
      }
      return msg;
    } catch (err) {
      // Another unique key than the platform message's (none today): still a duplicate, not a failure.
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  /**
   * The earlier messages shown before a person's message (a thread's history): kept as its own row,
   * tied to the message it preceded, so history shows it as recalled data, never as their words.
   */
  async recordContext(place: Place, sessionId: string | null, messageId: number, text: string, at: Date): Promise<void> {
    await this.db.message.create({
      data: { workspaceId: place.workspace.id, conversationId: place.conversation.id, sessionId, role: "context", text, replyToId: messageId, createdAt: at },
    });
    this.index?.stored();
  }

  /**
   * Stores cairn's reply to a person's message. The same statement marks that message answered, or
   * failed with a failed reply (a trigger, migration message_outcome), so the two never disagree.
   * The turn's lease on the message stays until the reply is posted (`recordDeliveries` ends it, a
   * trigger of migration turn_leases), so a crash between storing and posting is finished by another process.
   */
  async recordReply(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed"): Promise<Message>;
  /** Under a lease: stored only while the message answered is still leased to `lease.owner`; null when another process took the turn over. */
  async recordReply(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease): Promise<Message | null>;
  async recordReply(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease | null = null): Promise<Message | null> {
    // The turn's lease stays on the message answered until this reply is posted (recordDeliveries).
    const m = assistantRow(place.conversation, sessionId, text, status, replyToId);
    if (!lease) return this.batches.reply(m);
    return this.batches.heldReply(m, lease.owner);
  }

  /**
   * A session's messages in turn order: person messages with ids in (afterUserId, throughUserId], each
   * followed by cairn's reply to it. Ordering by turn, not by id, matters because messages queued in
   * a busy conversation are stored before the replies to the ones ahead of them. Failed apologies
   * are left out: they carry nothing the model needs. A session of another conversation reads as empty.
   */
  async sessionMessages(scope: ConversationScope, sessionId: string, afterUserId: number | null, throughUserId: number): Promise<HistoryMessage[]> {
    const after = afterUserId ?? 0;
    const params = [scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, after, throughUserId];
    const rows = (await this.direct.rows(this.sql.sessionMessages, params)).map(messageOf);
    return this.withAuthors(scope, rows);
  }

  /**
   * The conversation's newest `limit` messages (every session), in turn order: what a person
   * means by "this thread". Failed apologies are left out. Another conversation's read as none.
   */
  async recentMessages(scope: ConversationScope, limit: number): Promise<HistoryMessage[]> {
    const rows = await this.db.message.findMany({
      where: { workspaceId: scope.workspaceId, conversationId: scope.conversationId, NOT: { role: "assistant", status: "failed" } },
      orderBy: { id: "desc" },
      take: limit,
    });
    return this.withAuthors(scope, rows);
  }

  /** Messages with their authors (from the cache, the rest in one read), in turn order. */
  async withAuthors(scope: WorkspaceScope, rows: Message[]): Promise<HistoryMessage[]> {
    const authors = await this.peopleById(scope, rows.flatMap((r) => (r.authorId ? [r.authorId] : [])));
    return sortByTurn(rows.map((r) => ({ ...r, author: r.authorId ? (authors.get(r.authorId) ?? null) : null })));
  }

  /**
   * How these people of the workspace are named to the model (the prompt's "taught by"): the
   * display name, else the platform id. Only the workspace's own rows; an id not found is left out.
   */
  async names(scope: WorkspaceScope, ids: readonly string[]): Promise<Map<string, string>> {
    const people = ids.length ? await this.peopleById(scope, ids) : new Map<string, Person>();
    // The cache is keyed by id alone: a row of another workspace is never named here.
    return new Map([...people].filter(([, p]) => p.workspaceId === scope.workspaceId).map(([id, p]) => [id, p.displayName ?? p.externalId]));
  }

  private async peopleById(scope: WorkspaceScope, ids: readonly string[]): Promise<Map<string, Person>> {
    const out = new Map<string, Person>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const hit = this.people.get(id);
      if (hit) out.set(id, hit);
      else missing.push(id);
    }
    if (missing.length === 0) return out;
    for (const p of await this.db.person.findMany({ where: { id: { in: missing }, workspaceId: scope.workspaceId } })) {
      this.people.set(p.id, p);
      out.set(p.id, p);
    }
    return out;
  }

  /**
   * Records where a reply of this conversation was posted (each part of a split reply), so
   * reactions can find it. Throws if the conversation has no such message.
   */
  async recordDeliveries(conversationId: string, replyId: number, channelId: string, platformIds: readonly string[]): Promise<void> {
    if (platformIds.length === 0) return;
    // All or nothing: setting the platform id ends the turn's lease (a trigger), so a crash between
    // the two writes would leave a finished turn whose post reactions can never find. One statement
    // on PostgreSQL (with the other replies posted meanwhile), one in-process transaction on SQLite
    // (delivery-batch.ts): the conversation's next message waits for it.
    if (!(await this.deliveries({ conversationId, replyId, channelId, platformIds }))) throw new Error(`no stored reply ${replyId} in conversation ${conversationId}`);
  }

  /**
   * A reply none of whose parts reached the platform: marked failed, and the turn of the message
   * it answers is over (its lease ends: nothing will be posted for it).
   */
  async recordUndelivered(replyId: number): Promise<void> {
    const [row] = await this.db.message.updateManyAndReturn({ where: { id: replyId }, data: { status: "failed" }, select: { replyToId: true } });
    if (row?.replyToId) await this.db.message.updateMany({ where: { id: row.replyToId }, data: { leaseOwner: null, leaseUntil: null } });
  }

  /** The delivery of one of cairn's replies in this workspace with this platform id, if any. */
  async findDelivery(scope: WorkspaceScope, channelId: string, platformId: string) {
    return this.db.delivery.findFirst({ where: { workspaceId: scope.workspaceId, channelId, platformId } });
  }

  /** A conversation is stored under this key (see `conversationKey`): cairn answered there. */
  async conversationExists(key: string): Promise<boolean> {
    const [row] = await this.direct.rows(this.sql.conversation, [key]);
    return row !== undefined;
  }

  /** One of cairn's posts in this workspace has this platform id (a thread may have grown from it). */
  async postedAs(platform: string, workspaceExternalId: string, platformId: string): Promise<boolean> {
    const workspace = await this.findWorkspace(platform, workspaceExternalId);
    if (!workspace) return false;
    return (await this.db.delivery.findFirst({ where: { workspaceId: workspace.id, platformId }, select: { id: true } })) !== null;
  }

  /**
   * The conversation a post cairn starts itself goes to (a channel, a thread in it, or a person's
   * DMs), created if need be. `dmOwner` is the person whose DMs these are.
   */
  async placeOfPost(platform: Platform, workspaceExternalId: string, channelId: string, threadId: string | null, dmOwner: string | null): Promise<Conversation> {
    const inbound: Inbound = {
      platform,
      workspace: { externalId: workspaceExternalId },
      author: { externalId: dmOwner ?? "" },
      channel: { externalId: channelId, isDm: dmOwner !== null },
      threadId,
      messageId: "",
      text: "",
      sentAt: new Date(),
    };
    if (dmOwner !== null) return (await this.resolve(inbound)).conversation;
    const workspace = await this.workspaceOf(platform, workspaceExternalId);
    return this.conversationOf(workspace.id, inbound, null, false);
  }

  /** Stores a post cairn started itself (no person's message answered): its deliveries hang on it. */
  async recordPost(conversation: Conversation, text: string): Promise<Message> {
    return this.batches.reply(assistantRow(conversation, null, text, "sent", null));
  }

  /** Whether some workspace talked to cairn before `at` (the scheduler's slots count only then). */
  async workspaceCreatedBefore(at: Date): Promise<boolean> {
    return (await this.db.workspace.findFirst({ where: { createdAt: { lt: at } }, select: { id: true } })) !== null;
  }

  /** Search over the messages the scope may see (search.ts). */
  search(scope: Scope, query: string, opts: SearchOptions): Promise<SearchHit[]> {
    return searchMessages(this.database, scope, query, opts);
  }

  /** Reading by session, around a message, newest first, recent sessions: in the asker's scope (browse.ts). */
  get browse(): HistoryBrowse { return historyBrowse(this.db); }
  /** Of these messages (a reply's search results), those the person may see now (cited.ts). */
  cited(scope: PersonScope, ids: readonly number[], readable: readonly string[]): Promise<CitedMessage[]> {
    return citedMessages(this.db, scope, ids, readable);
  }

  /** The workspace row of a scope. */
  async workspace(scope: WorkspaceScope): Promise<Workspace | null> {
    return this.db.workspace.findUnique({ where: { id: scope.workspaceId } });
  }

  /** The person row of a scope, in its workspace. */
  async personIn(scope: PersonScope): Promise<Person | null> {
    return this.db.person.findFirst({ where: { id: scope.personId, workspaceId: scope.workspaceId } });
  }

  async findWorkspace(platform: string, externalId: string): Promise<Workspace | null> {
    return this.db.workspace.findFirst({ where: { platform, externalId } });
  }

  /** A message of this conversation; null for another conversation's. */
  async findMessage(scope: ConversationScope, id: number): Promise<Message | null> {
    return this.db.message.findFirst({ where: { id, workspaceId: scope.workspaceId, conversationId: scope.conversationId } });
  }

  /** The person of a workspace with this platform id, created on first sight. */
  async person(scope: WorkspaceScope, author: Inbound["author"]): Promise<Person> {
    const { workspaceId } = scope;
    const fresh = (): Person => {
      const now = new Date();
      return { id: cuid(), workspaceId, externalId: author.externalId, displayName: author.displayName ?? null, isBot: author.isBot ?? false, createdAt: now, updatedAt: now };
    };
    const { row } = await this.findOrInsert(
      this.placeBatches?.person ?? null,
      async () => {
        const [found] = await this.direct.rows(this.sql.person, [workspaceId, author.externalId]);
        return found ? personOf(found) : null;
      },
      this.placeInserts.person,
      () => personParams(this.provider, fresh()),
      personOf,
    );
    return row;
  }

  /**
   * Find-or-create of a row the direct path reads: on PostgreSQL the find and the insert in one
   * statement (`together`, place-batch.ts: with others asked at the same moment), on SQLite the
   * find, then an insert that does nothing when the row exists (ON CONFLICT DO NOTHING: on
   * PostgreSQL a failed statement would cost the pool its connection), in one transaction with
   * those made at the same moment (`placeInserts`). Either way a caller that
   * loses a race to create the row reads the winner's. `made`: this call created it.
   */
  private async findOrInsert<T>(
    together: FindOrMake | null,
    find: () => Promise<T | null>,
    insert: Insert,
    params: () => SqlParam[],
    of: (row: readonly unknown[]) => T,
  ): Promise<{ row: T; made: boolean }> {
    let made = false;
    const create = async (): Promise<T | null> => {
      const row = await insert(params());
      made = row !== null;
      return row && of(row);
    };
    if (!together) return { row: await findOrCreate(find, create), made };
    const row = await together(params());
    if (row) return { row: of(row), made: row[row.length - 1] === true };
    // Another insert won between this statement's find and its insert: that row is there now.
    const again = await find();
    if (!again) throw new Error("a row another caller created at the same moment could not be read");
    return { row: again, made: false };
  }

  /** The person's messages whose text is held: not those an erasure left as a tombstone. */
  async countByAuthor(scope: PersonScope): Promise<number> {
    return this.db.message.count({ where: { workspaceId: scope.workspaceId, authorId: scope.personId, NOT: { text: ERASED_TEXT } } });
  }
}
