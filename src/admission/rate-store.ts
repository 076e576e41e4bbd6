/**
 * The rate limit's statements (rate-limit.ts keeps the rule): count a person's messages in the
 * window that spent an answer and mark one admitted, in one statement under a lock per person
 * (`DirectSql.exclusive`), and find when the window has room again.
 *
 * Both take the direct path (db/direct.ts): they run for every person message. The person's
 * workspace is checked on the rows found by author (db/checked-on-rows.ts), so the planner keeps to
 * the (authorId, createdAt) index and cannot take a workspace index instead.
 */
import { sqlTime, timeColumn } from "../db/direct.ts";
import { checkedOnRows } from "../db/checked-on-rows.ts";
import type { Database } from "../db/client.ts";
import type { Provider } from "../db/migrate.ts";
import type { PersonScope } from "../ground/types.ts";

/** The person's messages in the window that spent an answer. Placeholders (from `n`): author, workspace, window start. */
function spent(provider: Provider, n: number): string {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  const p = (i: number): string => (pg ? `$${n + i}` : "?");
  return `${q("authorId")} = ${p(0)} AND ${checkedOnRows(provider, "workspaceId", p(1))} AND ${q("createdAt")} > ${p(2)} AND role = 'user' AND status <> 'failed' AND (admitted OR status = 'answered')`;
}

/**
 * Marks the message admitted if fewer than the limit spent an answer; returns its id if it did.
 * Placeholders: author, workspace, window start, limit, message id.
 */
const ADMIT_SQL: Record<Provider, string> = {
  postgresql: `UPDATE "Message" SET admitted = true WHERE id = $5 AND (SELECT count(*) FROM "Message" WHERE ${spent("postgresql", 1)}) < $4 RETURNING id`,
  // Positional `?` are numbered by order of appearance: the subquery's come first.
  sqlite: `UPDATE Message SET admitted = 1 WHERE (SELECT count(*) FROM Message WHERE ${spent("sqlite", 1)}) < ? AND id = ? RETURNING id`,
};

/**
 * The `offset + 1`-th newest message that spent an answer. Placeholders: author, workspace, window
 * start, offset.
 */
const NTH_SQL: Record<Provider, string> = {
  // Epoch milliseconds: pg would read a timestamp without zone as local time.
  postgresql: `SELECT ${timeColumn("postgresql", '"createdAt"')} FROM "Message" WHERE ${spent("postgresql", 1)} ORDER BY "createdAt" DESC LIMIT 1 OFFSET $4`,
  sqlite: `SELECT createdAt FROM Message WHERE ${spent("sqlite", 1)} ORDER BY createdAt DESC LIMIT 1 OFFSET ?`,
};

export class RateStore {
  private readonly admitSql: string;
  private readonly nthSql: string;

  constructor(private readonly database: Pick<Database, "direct" | "provider">) {
    this.admitSql = ADMIT_SQL[database.provider];
    this.nthSql = NTH_SQL[database.provider];
  }

  /** Marks the person's message `messageId` admitted if fewer than `limit` of theirs since `since` spent an answer. */
  async admit(person: PersonScope, messageId: number, since: Date, limit: number): Promise<boolean> {
    const params = [person.personId, person.workspaceId, this.time(since), limit, messageId];
    return (await this.database.direct.exclusive(`rate:${person.personId}`, this.admitSql, params)).length > 0;
  }

  /** When the `offset + 1`-th newest of the person's messages since `since` that spent an answer was sent; null if none. */
  async nthSpent(person: PersonScope, since: Date, offset: number): Promise<Date | null> {
    const [row] = await this.database.direct.rows(this.nthSql, [person.personId, person.workspaceId, this.time(since), offset]);
    return row ? new Date(row[0] as string | number) : null;
  }

  private time(at: Date): string {
    return sqlTime(this.database.provider, at);
  }
}
