/**
 * The entries a place may see, read below Prisma (db/direct.ts): a session's first turn reads every
 * entry of its place, and Prisma's client spent more CPU mapping those rows than SQLite spent finding
 * them. `visibleWhere` (where.ts) is the scope rule; `visibleSql` here is its twin in SQL, and a test
 * (memory-visible-direct) compares the rows both find. The columns and their types are listed once
 * (db/typed-rows.ts makes the rows Prisma would have returned).
 */
import type { Database } from "../db/client.ts";
import type { SqlParam } from "../db/direct.ts";
import { typedRows } from "../db/typed-rows.ts";
import type { Provider } from "../db/migrate.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import type { MemoryTarget, Scope } from "../ground/types.ts";
import { TARGETS } from "./entries.ts";

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
 * `visibleWhere` for a statement below Prisma (entry-rows.ts), over the entries aliased `e`: the same
 * targets and conditions (a test compares the rows both find), with an optional kind.
 */
function visibleSql(provider: Provider, scope: Scope, kind?: string): { where: string; params: SqlParam[] } {
  const params: SqlParam[] = [];
  const p = (v: SqlParam): string => (params.push(v), provider === "postgresql" ? `$${params.length}` : "?");
  const base = `e."workspaceId" = ${p(scope.workspaceId)} AND e."status" = 'active'`;
  const of = (t: MemoryTarget): string | null => {
    switch (t) {
      case "user":
        return `(e."scope" = 'user' AND e."ownerId" = ${p(scope.personId)})`;
      case "channel":
        return scope.isDm ? null : `(e."scope" = 'channel' AND e."channelKey" = ${p(scope.channelKey)})`;
      case "team":
        return `e."scope" = 'team'`;
    }
  };
  const targets = TARGETS.map(of).filter((t): t is string => t !== null);
  const where = `${base} AND (${targets.join(" OR ")})${kind ? ` AND e."kind" = ${p(kind)}` : ""}`;
  return { where, params };
}

/** The direct read of the entries a place may see, oldest first (MemoryStore.visible's rows). */
export class VisibleEntryStore {
  constructor(private readonly database: Pick<Database, "direct" | "provider">) {}

  async read(scope: Scope, kind?: string): Promise<MemoryEntry[]> {
    const { provider } = this.database;
    const { where, params } = visibleSql(provider, scope, kind);
    const rows = await this.database.direct.rows(`SELECT ${ENTRY.select(provider, "e")} FROM "MemoryEntry" e WHERE ${where} ORDER BY e."createdAt" ASC, e."id" ASC`, params);
    return rows.map(ENTRY.of);
  }
}
