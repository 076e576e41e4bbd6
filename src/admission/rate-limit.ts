/**
 * Per-person message budget over a sliding hour, so one person cannot exhaust the model budget.
 *
 * Counted in the database (every person message is stored before it is admitted): every replica
 * sharing the database sees the same count, and a restart forgets nothing. A message is admitted
 * when fewer than `perWindow` of the person's messages in the window spent an answer: admitted
 * before it, or answered (a message another process recovered after a crash skipped this check).
 * Failed ones do not count: the one over the limit is answered with the limit's reply, stored as
 * failed, so the wait that reply names holds however many more the person sends meanwhile; a
 * message the model could not answer spent no answer either.
 *
 * The count and the mark are one statement run under a lock per person (`DirectSql.exclusive`):
 * replicas checking one person's messages at the same moment take turns, and each counts the
 * admissions committed before it. (Counting earlier stored messages instead, with no mark, missed a
 * message stored by another replica but not yet committed: both were let through.)
 *
 * Both statements take the direct path (db/direct.ts): they run for every person message.
 */
import { sqlTime } from "../db/direct.ts";
import type { Database } from "../db/client.ts";
import type { Provider } from "../db/migrate.ts";

export type RateVerdict = { ok: true } | { ok: false; retryAfterMs: number };

export const RATE_WINDOW_MS = 60 * 60 * 1000;

/** The person's messages in the window that spent an answer. */
const SPENT: Record<Provider, string> = {
  postgresql: `"authorId" = $1 AND "createdAt" > $2 AND role = 'user' AND status <> 'failed' AND (admitted OR status = 'answered')`,
  sqlite: `authorId = ? AND createdAt > ? AND role = 'user' AND status <> 'failed' AND (admitted OR status = 'answered')`,
};

/**
 * Marks the message admitted if fewer than the limit spent an answer; returns its id if it did.
 * Placeholders: author id, window start, limit, message id.
 */
const ADMIT_SQL: Record<Provider, string> = {
  postgresql: `UPDATE "Message" SET admitted = true WHERE id = $4 AND (SELECT count(*) FROM "Message" WHERE ${SPENT.postgresql}) < $3 RETURNING id`,
  // Positional `?` are numbered by order of appearance: the subquery's come first.
  sqlite: `UPDATE Message SET admitted = 1 WHERE (SELECT count(*) FROM Message WHERE ${SPENT.sqlite}) < ? AND id = ? RETURNING id`,
};

/**
 * The `perWindow`-th newest message that spent an answer: the window has room again when it leaves.
 * Placeholders: author id, window start, OFFSET (perWindow - 1).
 */
const NTH_SQL: Record<Provider, string> = {
  // Epoch milliseconds: pg would read a timestamp without zone as local time.
  postgresql: `SELECT (extract(epoch FROM "createdAt") * 1000)::float8 FROM "Message" WHERE ${SPENT.postgresql} ORDER BY "createdAt" DESC LIMIT 1 OFFSET $3`,
  sqlite: `SELECT createdAt FROM Message WHERE ${SPENT.sqlite} ORDER BY createdAt DESC LIMIT 1 OFFSET ?`,
};

export class RateLimiter {
  private readonly admitSql: string;
  private readonly nthSql: string;

  constructor(
    private readonly database: Pick<Database, "direct" | "provider">,
    private readonly perWindow: number,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {
    this.admitSql = ADMIT_SQL[database.provider];
    this.nthSql = NTH_SQL[database.provider];
  }

  /**
   * Admits the person's stored message `messageId` if it is within their budget at `now`; if not,
   * the time until the oldest message that keeps the window full leaves it.
   */
  async take(personId: string, messageId: number, now: Date): Promise<RateVerdict> {
    if (this.perWindow <= 0) return { ok: true };
    const since = sqlTime(this.database.provider, new Date(now.getTime() - this.windowMs));
    const admitted = await this.database.direct.exclusive(`rate:${personId}`, this.admitSql, [personId, since, this.perWindow, messageId]);
    if (admitted.length > 0) return { ok: true };
    const [row] = await this.database.direct.rows(this.nthSql, [personId, since, this.perWindow - 1]);
    // None: an answer left the window since the check; the person may try again at once.
    if (!row) return { ok: false, retryAfterMs: 0 };
    const oldest = new Date(row[0] as string | number).getTime();
    return { ok: false, retryAfterMs: Math.max(0, oldest + this.windowMs - now.getTime()) };
  }
}

export function limitText(perHour: number, retryAfterMs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `You've reached the limit of ${perHour} messages per hour. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
