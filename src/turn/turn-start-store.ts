/**
 * The reads a turn starts with, sent as one statement: the session's messages and whether the
 * speaker has a correction open in the conversation (correction-store.ts `claim`). Nearly every
 * turn has none, and then looking for one costs no round trip of its own; with one open, `claim`
 * takes it as before (its conditional update is what keeps two replicas from both taking it).
 *
 * On PostgreSQL the reads asked while one is under way go together as one statement (group commit,
 * ground/group-batch.ts): in a burst every turn starts with this read, and each alone is a round
 * trip; together, each is still found as it would be alone (rows.ts, sessionMessagesMany).
 */
import type { Database } from "../db/client.ts";
import { sqlTime, type SqlParam } from "../db/direct.ts";
import { columnArrays } from "../db/insert-batch.ts";
import { GroupBatch } from "../ground/group-batch.ts";
import type { Scope } from "../ground/types.ts";
import { HISTORY_SQL, MESSAGE_COLUMNS, messageOf } from "../history/store/rows.ts";
import type { HistoryMessage, HistoryStore } from "../history/store/store.ts";
import { openCorrectionColumn, type CorrectionStore } from "../learning/correction-store.ts";

export interface TurnStart {
  /** The session's messages in turn order, as `HistoryStore.sessionMessages` reads them. */
  messages: HistoryMessage[];
  /** False only when the read found no correction `claim` could take: then the turn skips it. */
  correctionOpen: boolean;
  /** True when nothing looked yet (`correctionOpen` true only because nobody could say). */
  unchecked?: boolean;
}

/** Reads in one statement: a burst's turns in a few. */
const MAX_READS = 100;

/** One read's values: the session's (workspace, conversation, session, after, through), then the check's (person, since). */
type ReadParams = [string, string, string, number, number, string, string];

/** A read's values for the single statement on PostgreSQL: the session's placeholders, then the column's from $8. */
const pgParams = ([ws, conv, session, after, through, person, since]: ReadParams): SqlParam[] => [ws, conv, session, after, through, after, through, ws, conv, person, since];

export class TurnStartStore {
  private readonly sql: string;
  /** PostgreSQL: reads that wait while one is under way, sent together. */
  private readonly batch: GroupBatch<ReadParams, unknown[][]> | null = null;
  /** The open-correction check alone, for a turn with no session read to ride on (a new session's first message). */
  private readonly probeSql: string;

  constructor(
    private readonly database: Pick<Database, "provider" | "direct">,
    private readonly history: Pick<HistoryStore, "withAuthors">,
    private readonly corrections: Pick<CorrectionStore, "openSince">,
  ) {
    const sql = HISTORY_SQL[database.provider];
    this.sql = sql.sessionMessagesWith(openCorrectionColumn(database.provider, 8));
    this.probeSql = `SELECT ${openCorrectionColumn(database.provider, 1)}`;
    if (sql.sessionMessagesMany) {
      const many = sql.sessionMessagesMany(openCorrectionColumn(database.provider, (n) => ["r.ws", "r.conv", "r.person", "r.since"][n]!));
      this.batch = new GroupBatch(
        async (reads) => {
          // One read alone goes as one read: the statement over arrays is planned afresh each time
          // (a plan for one asker looks cheaper than the cached one for ten), 0.3 ms a turn here.
          if (reads.length === 1) return [{ ok: true, value: await database.direct.rows(this.sql, pgParams(reads[0]!)) }];
          const rows = await database.direct.rows(many, columnArrays(reads as readonly SqlParam[][]));
          const each: unknown[][][] = reads.map(() => []);
          // Each row ends with its read's number, from 1.
          for (const row of rows) each[Number(row[row.length - 1]) - 1]!.push(row.slice(0, -1));
          return each.map((value) => ({ ok: true, value }));
        },
        { maxItems: MAX_READS, maxInFlight: 1 },
      );
    }
  }

  /** Whether `claim` could find a correction the speaker has open in the conversation: one statement below Prisma. */
  async correctionOpen(scope: Scope): Promise<boolean> {
    const since = sqlTime(this.database.provider, this.corrections.openSince());
    const [row] = await this.database.direct.rows(this.probeSql, [scope.workspaceId, scope.conversationId, scope.personId, since]);
    return row !== undefined && row[0] !== null;
  }

  /** The session's person messages with ids in (afterUserId, throughUserId], with their replies. */
  async read(scope: Scope, sessionId: string, afterUserId: number | null, throughUserId: number): Promise<TurnStart> {
    const after = afterUserId ?? 0;
    const since = sqlTime(this.database.provider, this.corrections.openSince());
    let rows: unknown[][];
    if (this.batch) {
      rows = await this.batch.add([scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, scope.personId, since]);
    } else {
      const session = [scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, after, throughUserId];
      const probe = [scope.workspaceId, scope.conversationId, scope.personId, since];
      // SQLite's `?` are bound in the text's order, and the column comes before the WHERE (rows.ts).
      rows = await this.database.direct.rows(this.sql, [...probe, ...session]);
    }
    // The column rides on the rows: with none (a session of another conversation), nothing says none is open.
    const correctionOpen = rows.length === 0 || rows[0]![MESSAGE_COLUMNS.length + 1] !== null;
    return { messages: await this.history.withAuthors(scope, rows.map(messageOf)), correctionOpen };
  }
}
