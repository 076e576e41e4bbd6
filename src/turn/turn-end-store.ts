/**
 * The writes a turn ends with: its reply, and what the turn drew on (trace-store.ts). On PostgreSQL
 * they are one statement, a data-modifying CTE whose trace insert reads the reply's new id: one
 * round trip a turn less. Replies that end their turns together go as one statement of the same
 * kind over arrays (group commit, db/insert-batch.ts; one batch per lease owner, as
 * history/store/message-batch.ts batches replies without a trace): in a burst in a workspace with
 * memory every turn has a trace, and one statement each queued the next turns' reads behind them.
 * On SQLite a statement is a call into the same process, not a round trip: the reply is stored
 * alone and the turn records its trace after it (Learning.recordTurn), as PostgreSQL does when the
 * turn drew on nothing or failed.
 *
 * The reply is stored as `HistoryStore.recordReply` stores it (under a lease, only while the message
 * answered is still this process's), and the trace only with it: a turn taken over stores neither.
 * PostgreSQL's commit of them does not wait for the disk (db/flush-later.ts): a turn's end is what
 * recovery can redo, where the person's message it answers is not.
 */
import type { Database } from "../db/client.ts";
import type { SqlParam } from "../db/direct.ts";
import { FLUSH_LATER } from "../db/flush-later.ts";
import { columnArrays, insertBatch } from "../db/insert-batch.ts";
import { assistantRow, HISTORY_SQL, MESSAGE_COLUMNS, messageParams } from "../history/store/rows.ts";
import type { HistoryStore, Lease, Message, Place } from "../history/store/store.ts";
import { LEASE_OWNERS } from "../history/store/message-batch.ts";
import { memoize } from "../ground/cache/memoize.ts";
import { traceParams, traceUpsertManySql, traceUpsertSql, type TurnDrew } from "../learning/trace-store.ts";

export interface RecordedReply {
  /** The reply stored, or null when another process took the turn over. */
  reply: Message | null;
  /** Whether what the turn drew on was stored with it: if not, the turn records it (Learning.recordTurn). */
  traced: boolean;
}

/** A reply with its trace, to be stored: its row's values, its trace's, and the message it answers. */
interface Ending {
  row: SqlParam[];
  trace: SqlParam[];
  replyToId: number;
}

type EndingWrite = (e: Ending) => Promise<unknown[] | null>;

export class TurnEndStore {
  /** PostgreSQL: the reply alone, and the reply held under a lease (one batch per lease owner). */
  private readonly writes: { plain: EndingWrite; held: (owner: string) => EndingWrite } | null;

  constructor(
    private readonly database: Pick<Database, "provider" | "direct">,
    private readonly history: Pick<HistoryStore, "recordReply">,
  ) {
    this.writes = database.provider === "postgresql" ? pgWrites(database.direct) : null;
  }

  /** A reply with what its turn drew on (`drew` null: a failed turn, which leaves no trace). */
  async record(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease | null, drew: TurnDrew | null): Promise<RecordedReply> {
    const at = { workspaceId: place.conversation.workspaceId, conversationId: place.conversation.id };
    const trace = drew && traceParams(this.database.provider, { ...drew, ...at });
    if (!this.writes || !trace) {
      const reply = lease ? await this.history.recordReply(place, sessionId, replyToId, text, status, lease) : await this.history.recordReply(place, sessionId, replyToId, text, status);
      return { reply, traced: false };
    }
    const m = assistantRow(place.conversation, sessionId, text, status, replyToId);
    const ending = { row: messageParams(this.database.provider, m), trace, replyToId };
    const row = await (lease ? this.writes.held(lease.owner) : this.writes.plain)(ending);
    return row ? { reply: { id: Number(row[0]), ...m }, traced: true } : { reply: null, traced: false };
  }
}

/**
 * PostgreSQL's statements, alone and over arrays. The reply's insert takes $1..$14 (then $15, $16:
 * the message answered and the lease owner when held; the batch's owner is its $15), its trace the
 * placeholders after those.
 */
function pgWrites(direct: Database["direct"]): { plain: EndingWrite; held: (owner: string) => EndingWrite } {
  const sql = HISTORY_SQL.postgresql;
  const n = MESSAGE_COLUMNS.length;
  const one = (insert: string, first: number): string => `WITH reply AS (${insert}), trace AS (${traceUpsertSql("postgresql", "reply.id", first, "FROM reply")}), ${FLUSH_LATER.cte} SELECT id FROM reply ${FLUSH_LATER.join}`;
  const many = (insert: string, first: number): string => `WITH reply AS (${insert}), trace AS (${traceUpsertManySql("reply", first)}), ${FLUSH_LATER.cte} SELECT id, "replyToId" FROM reply ${FLUSH_LATER.join}`;
  const plain = { one: one(sql.insertMessage, n + 1), many: many(sql.insertReplyMany, n + 1) };
  const held = { one: one(sql.insertHeldReply, n + 3), many: many(sql.insertHeldReplyMany, n + 2) };
  /** One kind's batch: `owner` null for the reply alone, else the lease owner it is held under. */
  const batch = (sqls: { one: string; many: string }, owner: string | null): EndingWrite =>
    insertBatch<Ending>({
      one: async (e) => (await direct.rows(sqls.one, [...e.row, ...(owner === null ? [] : [e.replyToId, owner]), ...e.trace])).map((r) => [r[0], e.replyToId]),
      many: (items) => direct.rows(sqls.many, [...columnArrays(items.map((e) => e.row)), ...(owner === null ? [] : [owner]), ...columnArrays(items.map((e) => e.trace)), items.map((e) => e.replyToId)]),
      // Rows are matched to replies by the message each answers: a batch's rows return it after the id.
      rowKey: (row) => String(row[1]),
      itemKey: (e) => String(e.replyToId),
    });
  return { plain: batch(plain, null), held: memoize((owner: string) => batch(held, owner), LEASE_OWNERS) };
}
