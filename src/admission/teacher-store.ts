/**
 * A workspace's trusted teachers (`/cairn teachers add|remove|list`, admins): people whose team
 * writes reach the whole workspace without a teammate's approval (trust.ts). Kept by platform user
 * id, so someone can be trusted before cairn has met them.
 */
import type { Db } from "../db/client.ts";
import type { Teacher } from "../db/generated/sqlite/client.ts";
import type { WorkspaceScope } from "../ground/types.ts";

export type { Teacher };

export class TeacherStore {
  constructor(private readonly db: Db) {}

  async list(scope: WorkspaceScope): Promise<Teacher[]> {
    return this.db.teacher.findMany({ where: { workspaceId: scope.workspaceId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  async has(scope: WorkspaceScope, userId: string): Promise<boolean> {
    return (await this.db.teacher.count({ where: { workspaceId: scope.workspaceId, userId } })) > 0;
  }

  /** False when they were a teacher already. */
  async add(scope: WorkspaceScope, userId: string, addedById: string): Promise<boolean> {
    if (await this.has(scope, userId)) return false;
    try {
      await this.db.teacher.create({ data: { workspaceId: scope.workspaceId, userId, addedById } });
      return true;
    } catch {
      // Two admins adding the same person at once: the unique index keeps one row.
      return false;
    }
  }

  /** False when they were not a teacher. */
  async remove(scope: WorkspaceScope, userId: string): Promise<boolean> {
    const r = await this.db.teacher.deleteMany({ where: { workspaceId: scope.workspaceId, userId } });
    return r.count > 0;
  }
}
