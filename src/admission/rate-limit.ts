/**
 * Per-person message budget over a sliding hour, so one person cannot exhaust the model budget.
 *
 * Counted in the database, from the messages already stored (every person message is stored before
 * it is admitted): every replica sharing the database sees the same count, and a restart forgets
 * nothing. A message is admitted when fewer than `perWindow` of the person's earlier messages (lower
 * ids) in the window count. Those that failed do not: the one over the limit is answered with the
 * limit's reply, stored as failed, which marks the person's message failed in the same statement
 * (the message_outcome trigger), so the wait that reply names holds however many more the person
 * sends meanwhile; a message the model could not answer spent no answer either. Two replicas
 * storing one person's messages at once each count the other's if it has the lower id, so the
 * earlier is admitted first; only a message whose id is taken but not yet committed is missed.
 *
 * The count takes the direct path (db/direct.ts): it runs for every person message.
 */
import { sqlTime } from "../db/direct.ts";
import type { Database } from "../db/client.ts";
import type { Provider } from "../db/migrate.ts";

export type RateVerdict = { ok: true } | { ok: false; retryAfterMs: number };

export const RATE_WINDOW_MS = 60 * 60 * 1000;

/**
 * The `perWindow`-th newest counted message of the person before this one in the window: none means
 * there is room. Placeholders: author id, window start, message id, OFFSET (perWindow - 1).
 */
const NTH_SQL: Record<Provider, string> = {
  // Epoch milliseconds: pg would read a timestamp without zone as local time.
  postgresql: `SELECT (extract(epoch FROM "createdAt") * 1000)::float8 FROM "Message" WHERE "authorId" = $1 AND "createdAt" > $2 AND id < $3 AND role = 'user' AND status <> 'failed' ORDER BY "createdAt" DESC LIMIT 1 OFFSET $4`,
  // `+id`: checked on the rows the (authorId, createdAt) index finds, never a rowid range scan of
  // every older message.
  sqlite: `SELECT createdAt FROM Message WHERE authorId = ? AND createdAt > ? AND +id < ? AND role = 'user' AND status <> 'failed' ORDER BY createdAt DESC LIMIT 1 OFFSET ?`,
};

export class RateLimiter {
  private readonly sql: string;

  constructor(
    private readonly database: Pick<Database, "direct" | "provider">,
    private readonly perWindow: number,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {
    this.sql = NTH_SQL[database.provider];
  }

  /**
   * Whether the person's stored message `messageId` is within their budget at `now`; if not, the
   * time until the oldest message that keeps the window full leaves it.
   */
  async take(personId: string, messageId: number, now: Date): Promise<RateVerdict> {
    if (this.perWindow <= 0) return { ok: true };
    const since = new Date(now.getTime() - this.windowMs);
    const [row] = await this.database.direct.rows(this.sql, [personId, sqlTime(this.database.provider, since), messageId, this.perWindow - 1]);
    if (!row) return { ok: true };
    const oldest = new Date(row[0] as string | number).getTime();
    return { ok: false, retryAfterMs: Math.max(0, oldest + this.windowMs - now.getTime()) };
  }
}

export function limitText(perHour: number, retryAfterMs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `You've reached the limit of ${perHour} messages per hour. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
