/**
 * The reads a turn starts with, sent as one statement: the session's messages and whether the
 * speaker has a correction open in the conversation (correction-store.ts `claim`). Nearly every
 * turn has none, and then looking for one costs no round trip of its own; with one open, `claim`
 * takes it as before (its conditional update is what keeps two replicas from both taking it).
 */
import type { Database } from "../db/client.ts";
import { sqlTime } from "../db/direct.ts";
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

export class TurnStartStore {
  private readonly sql: string;
  /** The open-correction check alone, for a turn with no session read to ride on (a new session's first message). */
  private readonly probeSql: string;

  constructor(
    private readonly database: Pick<Database, "provider" | "direct">,
    private readonly history: Pick<HistoryStore, "withAuthors">,
    private readonly corrections: Pick<CorrectionStore, "openSince">,
  ) {
    this.sql = HISTORY_SQL[database.provider].sessionMessagesWith(openCorrectionColumn(database.provider, 8));
    this.probeSql = `SELECT ${openCorrectionColumn(database.provider, 1)}`;
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
    const session = [scope.workspaceId, scope.conversationId, sessionId, after, throughUserId, after, throughUserId];
    const probe = [scope.workspaceId, scope.conversationId, scope.personId, since];
    // SQLite's `?` are bound in the text's order, and the column comes before the WHERE (rows.ts).
    const params = this.database.provider === "sqlite" ? [...probe, ...session] : [...session, ...probe];
    const rows = await this.database.direct.rows(this.sql, params);
    // The column rides on the rows: with none (a session of another conversation), nothing says none is open.
    const correctionOpen = rows.length === 0 || rows[0]![MESSAGE_COLUMNS.length + 1] !== null;
    return { messages: await this.history.withAuthors(scope, rows.map(messageOf)), correctionOpen };
  }
}
