/**
 * The views' read model (build.ts): the team's memory as the Team pane groups it, the skills one
 * person may see in any status, and the people those rows name. What a viewer may see is decided
 * in these queries (the channels they can read are part of the WHERE clause), never after them.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry, Person, Skill } from "../db/generated/sqlite/client.ts";
import type { PersonScope, WorkspaceScope } from "../ground/scope.ts";

export type { MemoryEntry, Person, Skill } from "../db/generated/sqlite/client.ts";

/** The Team pane's rows, newest first each. */
export interface TeamMemory {
  rules: MemoryEntry[];
  /** Team rules waiting for an approval (they would replace one in force). */
  pendingRules: MemoryEntry[];
  /** Active lessons of the channels given. */
  channelLessons: MemoryEntry[];
  facts: MemoryEntry[];
}

const NEWEST = [{ createdAt: "desc" as const }, { id: "desc" as const }];

export class ViewStore {
  constructor(private readonly db: Db) {}

  /** People of the workspace by id (who taught what a view lists). */
  async people(scope: WorkspaceScope, ids: readonly (string | null)[]): Promise<Map<string, Person>> {
    const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
    if (wanted.length === 0) return new Map();
    const rows = await this.db.person.findMany({ where: { workspaceId: scope.workspaceId, id: { in: wanted } } });
    return new Map(rows.map((p) => [p.id, p]));
  }

  /** `channels`: the channels the viewer can read; a channel they cannot read contributes no row. */
  async teamMemory(scope: WorkspaceScope, channels: ReadonlySet<string>): Promise<TeamMemory> {
    const { workspaceId } = scope;
    const [rules, pendingRules, channelLessons, facts] = await Promise.all([
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "team", kind: "rule", status: "active" }, orderBy: NEWEST }),
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "team", kind: "rule", status: "pending" }, orderBy: NEWEST }),
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "channel", kind: "lesson", status: "active", channelKey: { in: [...channels] } }, orderBy: NEWEST }),
      this.db.memoryEntry.findMany({ where: { workspaceId, scope: "team", kind: "fact", status: "active" }, orderBy: NEWEST }),
    ]);
    return { rules, pendingRules, channelLessons, facts };
  }

  /**
   * The skills the person's prompt could read (bundled, team, their own, `channels`'), of any
   * status: the skills index's query shape, archived ones included (bundled archived ones aside).
   * Held ones aside: nobody's yet, they are listed as proposals in the team view.
   */
  skills(scope: PersonScope, channels: ReadonlySet<string>): Promise<Skill[]> {
    const mine: object[] = [{ scope: "team" }, { scope: "user", ownerId: scope.personId }, { scope: "channel", channelKey: { in: [...channels] } }];
    return this.db.skill.findMany({
      where: { OR: [{ bundled: true, status: { not: "archived" } }, { workspaceId: scope.workspaceId, status: { not: "held" }, OR: mine }] },
      orderBy: [{ name: "asc" }],
    });
  }
}
