/**
 * The reads a turn starts with, sent as one statement: the session's messages and whether the
 * speaker has a correction open in the conversation (correction-store.ts `claim`). Nearly every
 * turn has none, and then looking for one costs no round trip of its own; with one open, `claim`
 * takes it as before (its conditional update is what keeps two replicas from both taking it).
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

export interface TurnStart {
  /** The session's messages in turn order, as `HistoryStore.sessionMessages` reads them. */
  messages: HistoryMessage[];
  /** False only when the read found no correction `claim` could take: then the turn skips it. */
  correctionOpen: boolean;
  /** True when nothing looked yet (`correctionOpen` true only because nobody could say). */
  unchecked?: boolean;
}

/** One read's values: the session's (workspace, conversation, session, after, through), then the check's (person, since). */
type ReadParams = [string, string, string, number, number, string, string];

/**
 * A read's values for the single statement (rows.ts, `sessionMessagesWith`): PostgreSQL's session
 * placeholders, then the column's from $8; SQLite's `?` bound in the text's order, where the column
 * comes before the WHERE.
 */
function singleParams(provider: Provider, [ws, conv, session, after, through, person, since]: ReadParams): SqlParam[] {
  const sessionPart = [ws, conv, session, after, through, after, through];
  const probe = [ws, conv, person, since];
  return provider === "sqlite" ? [...probe, ...sessionPart] : [...sessionPart, ...probe];
}

export class TurnStartStore {
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
    const sql = HISTORY_SQL[provider];
    const single = sql.sessionMessagesWith(openCorrectionColumn(provider, 8));
    const alone = (read: ReadParams): Promise<unknown[][]> => direct.rows(single, singleParams(provider, read));
    this.probeSql = `SELECT ${openCorrectionColumn(provider, 1)}`;
    const many = sql.sessionMessagesMany?.(openCorrectionColumn(provider, (n) => ["r.ws", "r.conv", "r.person", "r.since"][n]!));
    this.rowsOf = many ? readBatch(direct, { one: alone, many, params: (read) => read }) : alone;
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
    const rows = await this.rowsOf([scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, scope.personId, since]);
    // The column rides on the rows: with none (a session of another conversation), nothing says none is open.
    const correctionOpen = rows.length === 0 || rows[0]![MESSAGE_COLUMNS.length + 1] !== null;
    return { messages: await this.history.withAuthors(scope, rows.map(messageOf)), correctionOpen };
  }
}
