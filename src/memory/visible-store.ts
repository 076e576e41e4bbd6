/**
 * The entries a place may see, read below Prisma (db/direct.ts): a session's first turn reads every
 * entry of its place, and Prisma's client spent more CPU mapping those rows than SQLite spent finding
 * them. `visibleWhere` (where.ts) is the scope rule; `VISIBLE_TO_ASKER` here is its twin in SQL, and a
 * test (memory-visible-direct) compares the rows both find. The columns and their types are listed once
 * (db/typed-rows.ts makes the rows Prisma would have returned).
 */
import type { Database } from "../db/client.ts";
import type { SqlParam } from "../db/direct.ts";
import { typedRows } from "../db/typed-rows.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import type { Scope } from "../ground/types.ts";
import { readBatch } from "../db/read-batch.ts";

/** Every MemoryEntry column and how it is read; the compiler checks the list against the model. */
const ENTRY = typedRows<MemoryEntry>({
  id: "text",
  workspaceId: "text",
  scope: "text",
  ownerId: "text",
  channelKey: "text",
  text: "text",
  status: "text",
  confidence: "float",
  source: "text",
  createdById: "text",
  sourceMessageId: "int",
  createdAt: "time",
  updatedAt: "time",
  lastUsedAt: "time",
  kind: "text",
  quote: "text",
  origin: "text",
  replacesId: "text",
  proposalMessageId: "int",
  proposedScope: "text",
  flag: "text",
  scannedWith: "text",
  validFrom: "time",
  validUntil: "time",
  supersededById: "text",
  verifiedAt: "time",
  verifiedById: "text",
  conflictWithId: "text",
  conflictPostId: "int",
  remindedAt: "time",
});

/**
 * `visibleWhere` in SQL, over the entries aliased `e` and an asker `r` (its workspace `ws`, person,
 * channel key `chan`, null in a DM, and kind, null for all): the same targets and conditions (a
 * test compares the rows both find). Written once for both databases: an asker alone is one row of
 * parameters, and on PostgreSQL the askers of a burst are a table (`unnest`) read in one statement.
 */
const VISIBLE_TO_ASKER = [
  `e."workspaceId" = r.ws AND e."status" = 'active'`,
  `(e."scope" = 'team' OR (e."scope" = 'user' AND e."ownerId" = r.person) OR (e."scope" = 'channel' AND e."channelKey" = r.chan))`,
  `(r.kind IS NULL OR e."kind" = r.kind)`,
].join(" AND ");

interface Asked {
  scope: Scope;
  kind: string | undefined;
}

/** An asker as the statement's parameters: a DM reads no channel's entries. */
function askerParams({ scope, kind }: Asked): SqlParam[] {
  return [scope.workspaceId, scope.personId, scope.isDm ? null : scope.channelKey, kind ?? null];
}

/**
 * The direct read of the entries a place may see, oldest first (MemoryStore.visible's rows). On
 * PostgreSQL the reads asked while one is under way go as one statement (db/read-batch.ts): every
 * new session's first turn reads its place's entries, and in a burst of 200 new conversations those
 * reads were half the burst's statements, each a round trip and a 30-column row description.
 */
export class VisibleEntryStore {
  private readonly rowsOf: (asked: Asked) => Promise<unknown[][]>;

  constructor(database: Pick<Database, "direct" | "provider">) {
    const { direct, provider } = database;
    const order = `ORDER BY r.i, e."createdAt" ASC, e."id" ASC`;
    // One asker: a row of parameters (the planner reads it as the four values themselves).
    const p = (n: number): string => (provider === "postgresql" ? `$${n}::text` : "?");
    const one = `SELECT ${ENTRY.select(provider, "e")}, r.i FROM (SELECT ${p(1)} AS ws, ${p(2)} AS person, ${p(3)} AS chan, ${p(4)} AS kind, 1 AS i) r JOIN "MemoryEntry" e ON ${VISIBLE_TO_ASKER} ${order}`;
    const alone = (a: Asked): Promise<unknown[][]> => direct.rows(one, askerParams(a));
    if (provider === "sqlite") {
      this.rowsOf = alone;
      return;
    }
    const askers = `unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(ws, person, chan, kind, i)`;
    // Each asker's entries found by the index as one asker's would be: as a plain join the planner
    // guesses ten askers and scans the whole table instead. OFFSET 0 keeps the subquery its own.
    const entries = `LATERAL (SELECT * FROM "MemoryEntry" e WHERE ${VISIBLE_TO_ASKER} OFFSET 0) e`;
    this.rowsOf = readBatch(direct, { one: alone, many: `SELECT ${ENTRY.select(provider, "e")}, r.i FROM ${askers} CROSS JOIN ${entries} ${order}`, params: askerParams });
  }

  async read(scope: Scope, kind?: string): Promise<MemoryEntry[]> {
    return (await this.rowsOf({ scope, kind })).map(ENTRY.of);
  }
}
