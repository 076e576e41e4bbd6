/**
 * Ids found by their first characters (a person typed a short id): each read puts the asker's scope
 * in its WHERE clause, the same clauses the listings that show those ids use, so a prefix never
 * finds (and an "ambiguous" answer never names) an id the asker could not see. A few rows at most:
 * more than one is already a question back to the person.
 */
import type { Db } from "../db/client.ts";
import type { Scope, WorkspaceScope } from "../ground/types.ts";
import { pendingWhere, visibleWhere } from "../memory/where.ts";
import { waitingWhere } from "../memory/share-store.ts";

/** Rows returned per lookup: enough to list the candidates of an ambiguous prefix. */
export const PREFIX_ROWS = 6;
/** Revisions read per lookup before the caller keeps those of items the asker may see. */
export const REVISION_ROWS = 20;

export interface EntryCandidate {
  id: string;
  text: string;
  kind: string;
  scope: string;
}

export class ShortIdStore {
  constructor(private readonly db: Db) {}

  /**
   * Memory entries whose id starts with `prefix` that the asker sees here: what a prompt here reads
   * (their profile, this channel, the team), what they proposed and have not confirmed, and team
   * rules waiting for approval (`lessons` lists them to everyone).
   */
  async entries(scope: Scope, prefix: string): Promise<EntryCandidate[]> {
    return this.find(scope, prefix, [...visibleWhere(scope).OR, pendingWhere(scope), { scope: "team", kind: "rule", status: "pending" }]);
  }

  /** Entries asked for the team (or held) whose id starts with `prefix`, as the team view shows them to a reader of `channels`: for approve and reject only. */
  async shares(scope: WorkspaceScope, channels: ReadonlySet<string>, prefix: string): Promise<EntryCandidate[]> {
    return this.find(scope, prefix, [waitingWhere(channels)]);
  }

  private find(scope: WorkspaceScope, prefix: string, seen: object[]): Promise<EntryCandidate[]> {
    return this.db.memoryEntry.findMany({
      where: { workspaceId: scope.workspaceId, id: { startsWith: prefix }, OR: seen },
      select: { id: true, text: true, kind: true, scope: true },
      orderBy: { id: "asc" },
      take: PREFIX_ROWS,
    });
  }

  /** Revisions of the workspace whose id starts with `prefix`; the caller keeps those whose item the asker sees. */
  async revisions(scope: WorkspaceScope, prefix: string) {
    return this.db.revision.findMany({ where: { workspaceId: scope.workspaceId, id: { startsWith: prefix } }, orderBy: { id: "asc" }, take: REVISION_ROWS });
  }

  /**
   * cairn's posts in the asker's channel whose platform id starts with `prefix` (`why <id>`); in a DM
   * only that DM's own, as `why` explains only those there.
   */
  async posts(scope: WorkspaceScope, where: { channelId: string; dmConversationId: string | null }, prefix: string) {
    return this.db.delivery.findMany({
      where: { workspaceId: scope.workspaceId, channelId: where.channelId, platformId: { startsWith: prefix }, ...(where.dmConversationId ? { conversationId: where.dmConversationId } : {}) },
      select: { platformId: true, createdAt: true },
      orderBy: { platformId: "asc" },
      take: PREFIX_ROWS,
    });
  }
}
