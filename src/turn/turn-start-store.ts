/**
 * The reads a turn starts with, sent as one statement: the session's messages, whether the
 * speaker has a correction open in the conversation (correction-store.ts `claim`), and, under a
 * lease, whether another process holds a turn for an earlier message of the conversation
 * (lease-store.ts `ahead`). Nearly every turn has neither, and then looking costs no round trip of
 * its own; with one open, `claim` takes it as before (its conditional update is what keeps two
 * replicas from both taking it), and with a turn ahead the turn waits for it (recovery.ts) and reads
 * its session again.
 *
 * On PostgreSQL the reads asked while one is under way go together as one statement
 * (db/read-batch.ts): in a burst every turn starts with this read, and each alone is a round trip;
 * together, each is still found as it would be alone (rows.ts, sessionMessagesMany).
 */
import type { Database } from "../db/client.ts";
import { sqlTime, type SqlParam } from "../db/direct.ts";
import type { Provider } from "../db/migrate.ts";
import { readBatch } from "../db/read-batch.ts";
import type { Scope } from "../ground/types.ts";
import { HISTORY_SQL, MESSAGE_COLUMNS, messageOf } from "../history/store/rows.ts";
import type { HistoryMessage, HistoryStore } from "../history/store/store.ts";
import { openCorrectionColumn, type CorrectionStore } from "../learning/correction-store.ts";
import { aheadColumn } from "./lease-store.ts";

export interface TurnStart {
  /** The session's messages in turn order, as `HistoryStore.sessionMessages` reads them. */
  messages: HistoryMessage[];
  /** False only when the read found no correction `claim` could take: then the turn skips it. */
  correctionOpen: boolean;
  /** True when nothing looked yet (`correctionOpen` true only because nobody could say). */
  unchecked?: boolean;
  /**
   * Asked with a lease (`read`'s `lease`): true unless the read found no earlier message of the
   * conversation that another process holds a turn for. Then the turn waits for those, and reads again.
   */
  aheadSeen?: boolean;
}

/** The turn's message and its process, for the look at turns ahead of it (lease-store.ts `ahead`). */
export interface LeasedMessage {
  owner: string;
  message: { id: number; createdAt: Date };
}

/**
 * One read's values: the session's (workspace, conversation, session, after, through), the
 * correction check's (person, since), the lease check's (owner, time, message id; nulls without a lease).
 */
type ReadParams = [string, string, string, number, number, string, string, string | null, string | null, number | null];

/**
 * A read's values for the single statement (rows.ts, `sessionMessagesWith`): PostgreSQL's session
 * placeholders, then the columns' from $8; SQLite's `?` bound in the text's order, where the columns
 * come before the WHERE.
 */
function singleParams(provider: Provider, [ws, conv, session, after, through, person, since, owner, at, mid]: ReadParams): SqlParam[] {
  const sessionPart = [ws, conv, session, after, through, after, through];
  const probes = [ws, conv, person, since, conv, ws, owner, at, at, mid];
  return provider === "sqlite" ? [...probes, ...sessionPart] : [...sessionPart, ...probes];
}

/**
 * A first read made while the turn's message was being stored (turn/intake.ts), made what `read`
 * would have read once it was: what it found from before the message, then the message itself.
 * Rows stored meanwhile with higher ids (a later message, another process's) are left out, as
 * `read`'s bound would leave them.
 */
export function withStored(start: TurnStart, stored: HistoryMessage): TurnStart {
  const before = start.messages.filter((m) => (m.role === "user" ? m.id : (m.replyToId ?? m.id)) < stored.id);
  return { ...start, messages: [...before, stored] };
}

/** Read before the message's id is known (`withStored`): every id up to the largest an id can be. */
export const ANY_ID = 2_147_483_647;

/** The columns after the message's: the correction check's, then the lease check's. */
const COLUMNS = { correction: MESSAGE_COLUMNS.length + 1, ahead: MESSAGE_COLUMNS.length + 2 };

export class TurnStartStore {
  /**
   * Whether a read sent beside a write costs less than one sent after it (turn/intake.ts): where a
   * statement is a round trip (PostgreSQL). On SQLite a statement is a call in this process.
   */
  readonly overlaps: boolean;

  /** A read's rows: alone, or on PostgreSQL with the reads asked while one is under way. */
  private readonly rowsOf: (read: ReadParams) => Promise<unknown[][]>;
  /** The open-correction check alone, for a turn with no session read to ride on (a new session's first message). */
  private readonly probeSql: string;

  constructor(
    private readonly database: Pick<Database, "provider" | "direct">,
    private readonly history: Pick<HistoryStore, "withAuthors">,
    private readonly corrections: Pick<CorrectionStore, "openSince">,
  ) {
    const { provider, direct } = database;
    this.overlaps = provider === "postgresql";
    const sql = HISTORY_SQL[provider];
    const pg = provider === "postgresql";
    const single = sql.sessionMessagesWith(`${openCorrectionColumn(provider, 8)}, ${aheadColumn(provider, (n) => (pg ? `$${12 + n}` : "(SELECT ?)"))}`);
    const alone = (read: ReadParams): Promise<unknown[][]> => direct.rows(single, singleParams(provider, read));
    this.probeSql = `SELECT ${openCorrectionColumn(provider, 1)}`;
    const overReads = (names: string[]) => (n: number) => names[n]!;
    const many = sql.sessionMessagesMany?.(
      `${openCorrectionColumn(provider, overReads(["r.ws", "r.conv", "r.person", "r.since"]))}, ${aheadColumn(provider, overReads(["r.conv", "r.ws", "r.owner", "r.at", "r.at", "r.mid"]))}`,
    );
    this.rowsOf = many ? readBatch(direct, { one: alone, many, params: (read) => read }) : alone;
  }

  /** Whether `claim` could find a correction the speaker has open in the conversation: one statement below Prisma. */
  async correctionOpen(scope: Scope): Promise<boolean> {
    const since = sqlTime(this.database.provider, this.corrections.openSince());
    const [row] = await this.database.direct.rows(this.probeSql, [scope.workspaceId, scope.conversationId, scope.personId, since]);
    return row !== undefined && row[0] !== null;
  }

  /**
   * The session's person messages with ids in (afterUserId, throughUserId], with their replies.
   * `lease`: the turn's message and process, to look for turns ahead of it (`TurnStart.aheadSeen`).
   */
  async read(scope: Scope, sessionId: string, afterUserId: number | null, throughUserId: number, lease: LeasedMessage | null = null): Promise<TurnStart> {
    const { provider } = this.database;
    const after = afterUserId ?? 0;
    const since = sqlTime(provider, this.corrections.openSince());
    const at = lease ? sqlTime(provider, lease.message.createdAt) : null;
    const rows = await this.rowsOf([scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, scope.personId, since, lease?.owner ?? null, at, lease?.message.id ?? null]);
    // The columns ride on the rows: with none (a session of another conversation), nothing says none is open, or none ahead.
    const first = rows[0];
    const correctionOpen = !first || first[COLUMNS.correction] !== null;
    const start: TurnStart = { messages: await this.history.withAuthors(scope, rows.map(messageOf)), correctionOpen };
    return lease ? { ...start, aheadSeen: !first || Number(first[COLUMNS.ahead]) !== 0 } : start;
  }
}
