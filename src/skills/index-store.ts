/**
 * The skills index a new session's prompt lists, read below Prisma (db/direct.ts): a session's
 * first turn read it through Prisma's client, whose mapping of a few dozen rows cost more than the
 * database spent finding them. The same rows as `SkillStore.index`'s Prisma read (a test compares
 * them on both databases); the columns are listed once, typed against `SkillIndexEntry`.
 */
import type { Database } from "../db/client.ts";
import { typedRows } from "../db/typed-rows.ts";
import type { Provider } from "../db/migrate.ts";
import { LIVE_STATUSES, type SkillIndexEntry } from "./visibility.ts";

const INDEX = typedRows<SkillIndexEntry>({
  name: "text",
  description: "text",
  status: "text",
  bundled: "bool",
  workspaceId: "text",
  scope: "text",
  ownerId: "text",
  channelKey: "text",
  createdById: "text",
  createdAt: "time",
  source: "text",
  verifiedAt: "time",
  descriptionChecked: "text",
});

function indexSql(provider: Provider): string {
  const live = LIVE_STATUSES.map((s) => `'${s}'`).join(", ");
  const ws = provider === "postgresql" ? "$1" : "?";
  const bundled = provider === "postgresql" ? `"bundled"` : `"bundled" = 1`;
  return `SELECT ${INDEX.select(provider)} FROM "Skill" WHERE "status" IN (${live}) AND (${bundled} OR "workspaceId" = ${ws}) ORDER BY "name" ASC`;
}

/** The live skills of a workspace and the bundled ones, by name: every row an index of the workspace may list. */
export class SkillIndexStore {
  private readonly sql: string;

  constructor(private readonly database: Pick<Database, "direct" | "provider">) {
    this.sql = indexSql(database.provider);
  }

  async read(workspaceId: string): Promise<SkillIndexEntry[]> {
    return (await this.database.direct.rows(this.sql, [workspaceId])).map(INDEX.of);
  }
}
