/**
 * SQLite's full-text index of history (message_fts) written in batches (migration
 * history_index_later). FTS5 writes a segment of its own at the end of each transaction that added
 * to it, and merges segments as they pile up; a turn stores the person's message and the reply
 * each alone (the message must be stored before anything else happens to it), so a trigger on
 * every insert paid that twice a turn: about a tenth of a quiet turn's time on SQLite, and the
 * merges' spikes (bench/README.md, "2026-12-07").
 *
 * Rows with ids up to HistoryIndexed.through are in the index. The rest are added together:
 * before any search reads the index (`ready`: a search sees every message stored before it, as
 * with the trigger), and a short while after messages are stored (`stored`), so the index never
 * lags far. Ids follow commit order (one writer at a time, AUTOINCREMENT), so one mark is exact.
 * Edits and deletions of indexed rows still update the index at once (the triggers); a row not
 * indexed yet is indexed with its text as it is then, or not at all once deleted.
 *
 * Channel knowledge (knowledge_fts) keeps its insert trigger: it is written 100 rows a statement.
 */
import type { DirectSql } from "../../db/direct.ts";

/** Whether some message has an id past the mark (knowledge included: the catch-up then only moves the mark). */
const PENDING = `SELECT (SELECT MAX("id") FROM "Message") > "through" FROM "HistoryIndexed"`;

/** One transaction: every history message past the mark indexed, and the mark moved past them. */
export const HISTORY_INDEX_CATCH_UP: readonly string[] = [
  `INSERT INTO "message_fts"(rowid, text)
     SELECT "id", "text" FROM "Message" WHERE "id" > (SELECT "through" FROM "HistoryIndexed") AND "role" <> 'channel' ORDER BY "id"`,
  `UPDATE "HistoryIndexed" SET "through" = MAX("through", COALESCE((SELECT MAX("id") FROM "Message"), 0))`,
];

/** After messages are stored, how soon they are indexed when no search comes first. */
export const INDEX_AFTER_MS = 250;

export class HistoryIndex {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly direct: Pick<DirectSql, "rows" | "chain">) {}

  /** Messages were stored: indexed within INDEX_AFTER_MS, together with any stored meanwhile. */
  stored(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A catch-up that fails (the database closed meanwhile, or busy past its timeout) leaves the
      // rows to the next: every search runs one first.
      this.ready().catch(() => {});
    }, INDEX_AFTER_MS);
    // Nothing is lost by a process that ends first: the rows wait for the next catch-up.
    this.timer.unref();
  }

  /** Every message stored before this call is in the index once it resolves. */
  async ready(): Promise<void> {
    const [row] = await this.direct.rows(PENDING, []);
    if (!row?.[0]) return;
    await this.direct.chain(HISTORY_INDEX_CATCH_UP.map((sql) => [sql, []] as const));
  }
}

const indexes = new WeakMap<Pick<DirectSql, "rows" | "chain">, HistoryIndex>();

/** The one HistoryIndex of a SQLite database's connection (its stores and searches share it). */
export function historyIndex(direct: Pick<DirectSql, "rows" | "chain">): HistoryIndex {
  let index = indexes.get(direct);
  if (!index) indexes.set(direct, (index = new HistoryIndex(direct)));
  return index;
}
