/**
 * The writes a turn ends with: its reply, and what the turn drew on (trace-store.ts). On PostgreSQL
 * they are one statement, a data-modifying CTE whose trace insert reads the reply's new id: one
 * round trip a turn less. On SQLite a statement is a call into the same process, not a round trip:
 * the reply is stored alone and the turn records its trace after it (Learning.recordTurn), as
 * PostgreSQL does when the turn drew on nothing or failed.
 *
 * The reply is stored as `HistoryStore.recordReply` stores it (under a lease, only while the message
 * answered is still this process's), and the trace only with it: a turn taken over stores neither.
 * PostgreSQL's commit of them does not wait for the disk (db/flush-later.ts): a turn's end is what
 * recovery can redo, where the person's message it answers is not.
 */
import type { Database } from "../db/client.ts";
import { FLUSH_LATER } from "../db/flush-later.ts";
import { assistantRow, HISTORY_SQL, messageParams } from "../history/store/rows.ts";
import type { HistoryStore, Lease, Message, Place } from "../history/store/store.ts";
import { traceParams, traceUpsertSql, type TurnDrew } from "../learning/trace-store.ts";

export interface RecordedReply {
  /** The reply stored, or null when another process took the turn over. */
  reply: Message | null;
  /** Whether what the turn drew on was stored with it: if not, the turn records it (Learning.recordTurn). */
  traced: boolean;
}

export class TurnEndStore {
  /** PostgreSQL's statements: the reply alone, or held under a lease, each followed by its trace. */
  private readonly sql: { plain: string; held: string } | null;

  constructor(
    private readonly database: Pick<Database, "provider" | "direct">,
    private readonly history: Pick<HistoryStore, "recordReply">,
  ) {
    const sql = HISTORY_SQL.postgresql;
    // The reply's insert takes $1..$14 ($15, $16: the message answered and the lease owner when held).
    const withTrace = (insert: string, first: number): string => `WITH reply AS (${insert}), trace AS (${traceUpsertSql("postgresql", "reply.id", first, "FROM reply")}), ${FLUSH_LATER.cte} SELECT id FROM reply ${FLUSH_LATER.join}`;
    this.sql = database.provider === "postgresql" ? { plain: withTrace(sql.insertMessage, 15), held: withTrace(sql.insertHeldReply, 17) } : null;
  }

  /** A reply with what its turn drew on (`drew` null: a failed turn, which leaves no trace). */
  async record(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease | null, drew: TurnDrew | null): Promise<RecordedReply> {
    const at = { workspaceId: place.conversation.workspaceId, conversationId: place.conversation.id };
    const trace = drew && traceParams(this.database.provider, { ...drew, ...at });
    if (!this.sql || !trace) {
      const reply = lease ? await this.history.recordReply(place, sessionId, replyToId, text, status, lease) : await this.history.recordReply(place, sessionId, replyToId, text, status);
      return { reply, traced: false };
    }
    const m = assistantRow(place.conversation, sessionId, text, status, replyToId);
    const params = messageParams(this.database.provider, m);
    const rows = lease ? await this.database.direct.rows(this.sql.held, [...params, replyToId, lease.owner, ...trace]) : await this.database.direct.rows(this.sql.plain, [...params, ...trace]);
    return rows[0] ? { reply: { id: Number(rows[0][0]), ...m }, traced: true } : { reply: null, traced: false };
  }
}
