/**
 * Which process, of all sharing the database, acts on a platform event.
 *
 * Slack spreads its events over the replicas' connections, but Discord sends every dispatch to
 * every gateway session of a bot: each replica sees every slash command, button click, reaction and
 * message. A person's message needs nothing more (the core stores it under a unique key, and the
 * replica that stored it answers), but what an adapter does without storing anything (answering an
 * interaction, posting a notice, queueing a reaction's feedback) would happen once per replica.
 * Before acting, the adapter claims the event here; the one process whose claim lands first acts.
 *
 * A claim is one atomic statement (an insert that, on a key taken already, updates only a claim
 * older than the window), so two processes claiming at once cannot both win. Rows hold platform ids
 * only, and those older than a day are purged, at most once an hour, from the claim path itself:
 * no event is delivered again that late (an interaction's token lives 15 minutes).
 */
import { sqlTime, type SqlParam } from "../db/direct.ts";
import type { Database } from "../db/client.ts";
import type { Provider } from "../db/migrate.ts";
import { errText, type Logger } from "../ground/log.ts";

const HOUR_MS = 60 * 60 * 1000;
/** How long a claim is kept: far longer than any platform redelivers an event. */
export const CLAIM_RETENTION_MS = 24 * HOUR_MS;
const PURGE_EVERY_MS = HOUR_MS;

/** Placeholders: key, claimed at, the time before which an earlier claim of the key has lapsed. */
const CLAIM_SQL: Record<Provider, string> = {
  sqlite: claimSql(["?", "?", "?"]),
  postgresql: claimSql(["$1", "$2", "$3"]),
};

/** Placeholder: the time before which claims go. */
const PURGE_SQL: Record<Provider, string> = {
  sqlite: `DELETE FROM "EventClaim" WHERE "claimedAt" < ?`,
  postgresql: `DELETE FROM "EventClaim" WHERE "claimedAt" < $1`,
};

function claimSql([key, at, lapsed]: readonly string[]): string {
  return `INSERT INTO "EventClaim" ("key", "claimedAt") VALUES (${key}, ${at}) ON CONFLICT ("key") DO UPDATE SET "claimedAt" = excluded."claimedAt" WHERE "EventClaim"."claimedAt" < ${lapsed} RETURNING "key"`;
}

/** No claim is older than this: the lapse time of a key claimed once for good. */
const NEVER = new Date(0);

export class ClaimStore {
  private readonly claimSql: string;
  private readonly purgeSql: string;
  private lastPurge = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly database: Pick<Database, "direct" | "provider">,
    private readonly now: () => Date = () => new Date(),
    private readonly log?: Logger,
  ) {
    this.claimSql = CLAIM_SQL[database.provider];
    this.purgeSql = PURGE_SQL[database.provider];
  }

  /**
   * True for the one process that takes `key` first. With `windowMs` > 0 a claim lapses after that
   * long, and the key may be taken again: for an event without an id of its own (a reaction: the
   * same person adding the same emoji later is a new event). Throws when the database cannot answer.
   */
  async claim(key: string, windowMs = 0): Promise<boolean> {
    const at = this.now();
    const lapsed = windowMs > 0 ? new Date(at.getTime() - windowMs) : NEVER;
    const params: SqlParam[] = [key, this.time(at), this.time(lapsed)];
    const rows = await this.database.direct.rows(this.claimSql, params);
    await this.purgeIfDue(at);
    return rows.length > 0;
  }

  /** Old claims go; a failure is retried an hour later and never costs the claim that ran it. */
  private async purgeIfDue(at: Date): Promise<void> {
    if (at.getTime() - this.lastPurge < PURGE_EVERY_MS) return;
    // Set before the statement: claims made meanwhile do not purge too.
    this.lastPurge = at.getTime();
    try {
      await this.database.direct.rows(this.purgeSql, [this.time(new Date(at.getTime() - CLAIM_RETENTION_MS))]);
    } catch (err) {
      this.log?.warn({ err: errText(err) }, "could not purge old event claims; trying again in an hour");
    }
  }

  private time(at: Date): string {
    return sqlTime(this.database.provider, at);
  }
}
