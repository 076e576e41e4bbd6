/**
 * The turn leases' statements (leases.ts keeps the policy: who owns what, for how long) and the
 * reads recovery.ts makes of a turn it took over. A lease lives on the person's message row
 * (`leaseOwner`, `leaseUntil`); see leases.ts for the invariants.
 *
 * The two reads of one conversation's leased rows (`ahead`, run before every leased turn, and
 * `expired`) take the direct path (db/direct.ts). There the scope's workspace is checked on the rows
 * found (SQLite: under unary +, so it cannot draw the planner off the conversation's or the
 * leases' indexes; with no statistics it would take a workspace index, a scan of the workspace).
 */
import type { Database, Db } from "../db/client.ts";
import { sqlTime, timeColumn, type DirectSql } from "../db/direct.ts";
import { lateralMany, readBatch } from "../db/read-batch.ts";
import { checkedOnRows } from "../db/checked-on-rows.ts";
import type { Provider } from "../db/migrate.ts";
import { conversationScope } from "../db/scopes.ts";
import type { Conversation, Message, Person, Workspace } from "../db/generated/sqlite/client.ts";
import type { ConversationScope } from "../ground/types.ts";
import type { Lease } from "../history/store/store.ts";

/** A leased row of another process that stands before a turn (its conversation's earlier work). */
export interface Ahead {
  id: number;
  owner: string;
  until: Date;
}

/** A person's message whose turn this process took over, with the rows recovery needs to finish it. */
export interface TakenTurn {
  message: Message;
  workspace: Workspace;
  conversation: Conversation;
  /** Its author, read in its workspace; null when gone (erased) or never a person. */
  author: Person | null;
  /** cairn's latest stored reply to it, if one was stored before the process died. */
  reply: Message | null;
}

interface LeaseSql {
  /** Placeholders: conversation, workspace, owner left out, createdAt, createdAt, id. */
  ahead: string;
  /** Placeholders: conversation, workspace, now. */
  expired: string;
}

function sqlFor(provider: Provider, at?: (n: number) => string): LeaseSql {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  const p = at ?? ((n: number): string => (pg ? `$${n}` : "?"));
  const until = timeColumn(provider, q("leaseUntil"));
  // Found through the index of the conversation's leased messages, the workspace checked on them.
  const inConversation = `${q("conversationId")} = ${p(1)} AND ${checkedOnRows(provider, "workspaceId", p(2))} AND ${q("leaseOwner")} IS NOT NULL`;
  return {
    ahead: `SELECT id, ${q("leaseOwner")}, ${until} FROM ${q("Message")} WHERE ${inConversation} AND ${q("leaseOwner")} <> ${p(3)} AND role = 'user' AND (${q("createdAt")} < ${p(4)} OR (${q("createdAt")} = ${p(5)} AND id < ${p(6)})) ORDER BY ${q("createdAt")}, id`,
    expired: `SELECT id FROM ${q("Message")} WHERE ${inConversation} AND ${q("leaseUntil")} <= ${p(3)} ORDER BY ${q("createdAt")}, id`,
  };
}

/**
 * `ahead` for many turns in one statement (PostgreSQL; db/read-batch.ts): in a burst every new
 * conversation's first turn looks, and one statement each queued the turns' other reads behind
 * them.
 */
const AHEAD_MANY = lateralMany(
  [["conv", "text"], ["ws", "text"], ["owner", "text"], ["at", "timestamp(3)"], ["mid", "integer"]],
  // `ahead`'s placeholders: the time is its fourth and fifth.
  (v) => sqlFor("postgresql", (n) => v(["conv", "ws", "owner", "at", "at", "mid"][n - 1]!)).ahead,
);

const LEASE_SQL: Record<Provider, LeaseSql> = { sqlite: sqlFor("sqlite"), postgresql: sqlFor("postgresql") };

/**
 * 1 when `ahead` would find a row, else 0, as a column of another statement (the turn's first read,
 * turn-start-store.ts), so the look costs no round trip of its own. `v(n)` writes that statement's
 * expression for `ahead`'s n-th value: conversation, workspace, owner, time, the same time, message
 * id. An owner of null finds nothing (a turn under no lease waits for nobody).
 */
export function aheadColumn(provider: Provider, v: (n: number) => string): string {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  // Found through the partial index of the conversation's leased messages, the workspace checked on
  // the rows it holds (db/checked-on-rows.ts): a handful of rows whatever the statistics say. SQLite
  // names the index, so the statement is not planned again at every run either (rows.ts, the session
  // read this column rides on).
  const from = pg ? q("Message") : "Message INDEXED BY Message_leaseConversation_idx";
  const found = `SELECT 1 FROM ${from} WHERE ${q("conversationId")} = ${v(0)} AND ${checkedOnRows(provider, "workspaceId", v(1))} AND ${q("leaseOwner")} IS NOT NULL AND ${q("leaseOwner")} <> ${v(2)} AND role = 'user' AND (${q("createdAt")} < ${v(3)} OR (${q("createdAt")} = ${v(4)} AND id < ${v(5)}))`;
  return `CASE WHEN EXISTS (${found}) THEN 1 ELSE 0 END AS ${q("aheadSeen")}`;
}

export class LeaseStore {
  private readonly db: Db;
  private readonly direct: DirectSql;
  private readonly provider: Provider;
  private readonly sql: LeaseSql;
  /** `ahead`'s rows for (conversation, workspace, owner, time, message id): batched with others' on PostgreSQL. */
  private readonly aheadRows: (params: [string, string, string, string, number]) => Promise<unknown[][]>;

  constructor(database: Database) {
    this.db = database.prisma;
    this.direct = database.direct;
    this.provider = database.provider;
    this.sql = LEASE_SQL[database.provider];
    const one = ([conv, ws, owner, at, id]: [string, string, string, string, number]) => this.direct.rows(this.sql.ahead, [conv, ws, owner, at, at, id]);
    this.aheadRows = database.provider === "postgresql" ? readBatch(this.direct, { one, many: AHEAD_MANY, params: (item) => item }) : one;
  }

  /** Moves every lease of `owner` to `until` (renewal, or `new Date(0)`: handed back); how many. */
  async extendAll(owner: string, until: Date): Promise<number> {
    return (await this.db.message.updateMany({ where: { leaseOwner: owner }, data: { leaseUntil: until } })).count;
  }

  /**
   * The conversation's person messages sent before `m` (by the platform's time; the id breaks
   * ties) leased to another owner than `owner`, in that order.
   */
  async ahead(scope: ConversationScope, owner: string, m: { id: number; createdAt: Date }): Promise<Ahead[]> {
    const at = sqlTime(this.provider, m.createdAt);
    const rows = await this.aheadRows([scope.conversationId, scope.workspaceId, owner, at, m.id]);
    return rows.map((r) => ({ id: Number(r[0]), owner: r[1] as string, until: r[2] === null ? new Date(0) : new Date(r[2] as string | number) }));
  }

  /** Owners holding a lease that runs past `now`: the processes with turns in flight. */
  async liveOwners(now: Date): Promise<string[]> {
    const rows = await this.db.message.findMany({ where: { leaseOwner: { not: null }, leaseUntil: { gt: now } }, distinct: ["leaseOwner"], select: { leaseOwner: true } });
    return rows.flatMap((r) => (r.leaseOwner === null ? [] : [r.leaseOwner]));
  }

  /** Ends now the leases of `owner` still running at `now`; how many. */
  async expireOwner(owner: string, now: Date): Promise<number> {
    return (await this.db.message.updateMany({ where: { leaseOwner: owner, leaseUntil: { gt: now } }, data: { leaseUntil: new Date(0) } })).count;
  }

  /**
   * Conversations of these platforms with leases expired at `now`, oldest first: their scopes and
   * keys. Across workspaces: a dead process's turns, whichever workspace they are in.
   */
  async expiredConversations(platforms: readonly string[], now: Date, limit: number): Promise<{ scope: ConversationScope; key: string }[]> {
    const rows = await this.db.message.findMany({
      where: { leaseUntil: { lte: now }, leaseOwner: { not: null }, conversation: { workspace: { platform: { in: [...platforms] } } } },
      select: { conversationId: true, conversation: { select: { key: true, workspaceId: true } } },
      orderBy: { id: "asc" },
      take: limit * 4,
    });
    const byId = new Map(rows.map((r) => [r.conversationId, r.conversation]));
    return [...byId].slice(0, limit).map(([id, c]) => ({ scope: conversationScope({ id, workspaceId: c.workspaceId }), key: c.key }));
  }

  /** The conversation's rows whose leases expired at `now`, in the order their messages were sent. */
  async expired(scope: ConversationScope, now: Date): Promise<number[]> {
    const rows = await this.direct.rows(this.sql.expired, [scope.conversationId, scope.workspaceId, sqlTime(this.provider, now)]);
    return rows.map((r) => Number(r[0]));
  }

  /** Takes row `id` under `lease` if its lease is still expired at `now`: of two processes racing, exactly one gets it. */
  async take(scope: ConversationScope, id: number, lease: Lease, now: Date): Promise<boolean> {
    const { count } = await this.db.message.updateMany({
      where: { id, workspaceId: scope.workspaceId, conversationId: scope.conversationId, leaseOwner: { not: null }, leaseUntil: { lte: now } },
      data: { leaseOwner: lease.owner, leaseUntil: lease.until },
    });
    return count === 1;
  }

  /** Ends a row's lease held by `owner`, without a delivery. */
  async end(id: number, owner: string): Promise<void> {
    await this.db.message.updateMany({ where: { id, leaseOwner: owner }, data: { leaseOwner: null, leaseUntil: null } });
  }

  /** A message of the conversation leased to `owner`, with what finishing its turn needs; null if not (any longer) theirs. */
  async taken(scope: ConversationScope, id: number, owner: string): Promise<TakenTurn | null> {
    const row = await this.db.message.findFirst({
      where: { id, leaseOwner: owner, workspaceId: scope.workspaceId, conversationId: scope.conversationId },
      include: { conversation: { include: { workspace: true } } },
    });
    if (!row) return null;
    const { conversation, ...message } = row;
    const { workspace, ...conv } = conversation;
    const author = message.authorId ? await this.db.person.findFirst({ where: { id: message.authorId, workspaceId: workspace.id } }) : null;
    // Found by the message just read in the scope (replyToId's index); the workspace is left out
    // of this WHERE: with no statistics, SQLite would take its (workspaceId, role) index instead.
    const reply =
      message.role === "user" && author && message.status !== "received"
        ? await this.db.message.findFirst({ where: { replyToId: message.id, role: "assistant", conversationId: conversation.id }, orderBy: { id: "desc" } })
        : null;
    return { message, workspace, conversation: conv, author, reply };
  }
}
