/**
 * Who can read a listened channel now: the list a search of channel knowledge is limited to.
 *
 * Two ways, by what the platform offers:
 * - A platform that can say who may read a channel right now (Discord: the person's roles and the
 *   channel's permission overwrites) answers `canRead` at search time.
 * - Otherwise (Slack) the members are kept in ChannelMember: read whole from the platform when
 *   listening starts and again after `ttlMs`, and changed at once by member events (whichever
 *   replica receives one writes it, and every replica's next search reads it). Someone who leaves
 *   a channel stops finding its messages with their next search.
 * A replica without the platform attached uses the stored members as they are.
 */
import type { Db } from "../db/client.ts";
import type { PlatformAdapter } from "../ground/adapter.ts";
import type { Workspace } from "../db/generated/sqlite/client.ts";
import type { Logger } from "../ground/log.ts";
import type { KnowledgeStore } from "./store.ts";

export const DEFAULT_MEMBERS_TTL_MS = 10 * 60_000;

export class ChannelReaders {
  constructor(
    private readonly db: Db,
    private readonly knowledge: KnowledgeStore,
    private readonly adapterFor: (platform: string) => PlatformAdapter | null,
    private readonly log: Logger,
    private readonly ttlMs = DEFAULT_MEMBERS_TTL_MS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The listened channels of the workspace whose knowledge this person can read now. */
  async readable(workspaceId: string, personId: string): Promise<string[]> {
    const channels = [...(await this.knowledge.listened(workspaceId)).keys()];
    if (channels.length === 0) return [];
    const [workspace, person] = await Promise.all([
      this.db.workspace.findUnique({ where: { id: workspaceId } }),
      this.db.person.findFirst({ where: { id: personId, workspaceId } }),
    ]);
    if (!workspace || !person) return [];
    const adapter = this.adapterFor(workspace.platform);
    if (adapter?.canRead) return adapter.canRead(workspace.externalId, person.externalId, channels);
    if (adapter?.channelMembers) await this.refreshStale(workspace, adapter);
    const rows = await this.db.channelMember.findMany({ where: { workspaceId, userId: person.externalId, channelId: { in: channels } }, select: { channelId: true } });
    return rows.map((r) => r.channelId);
  }

  /** Re-reads the members of every listened channel read longer than the TTL ago. */
  private async refreshStale(workspace: Workspace, adapter: PlatformAdapter): Promise<void> {
    const stale = new Date(this.now().getTime() - this.ttlMs);
    const due = [...(await this.knowledge.listened(workspace.id)).values()].filter((l) => !l.membersAt || l.membersAt < stale);
    await Promise.all(due.map((l) => this.refresh(workspace, l.channelId, adapter)));
  }

  /** Reads a channel's members whole from the platform and stores them in place of the old list. */
  async refresh(workspace: Workspace, channel: string, adapter: PlatformAdapter | null = this.adapterFor(workspace.platform)): Promise<boolean> {
    if (!adapter?.channelMembers) return false;
    let members: string[];
    try {
      members = await adapter.channelMembers(workspace.externalId, channel);
    } catch (err) {
      // The stored list stays; the next search tries again.
      this.log.warn({ err: err instanceof Error ? err.message : String(err), channel }, "could not read a channel's members");
      return false;
    }
    await this.db.$transaction(async (tx) => {
      await tx.channelMember.deleteMany({ where: { workspaceId: workspace.id, channelId: channel } });
      if (members.length) await tx.channelMember.createMany({ data: [...new Set(members)].map((userId) => ({ workspaceId: workspace.id, channelId: channel, userId })) });
      await tx.channelListen.updateMany({ where: { workspaceId: workspace.id, channelId: channel }, data: { membersAt: this.now() } });
    });
    this.knowledge.changed(workspace.id);
    return true;
  }

  /** A member event: someone joined or left a listened channel. */
  async member(workspace: Workspace, channel: string, user: string, joined: boolean): Promise<void> {
    if (!(await this.knowledge.listened(workspace.id)).has(channel)) return;
    const key = { workspaceId: workspace.id, channelId: channel, userId: user };
    if (!joined) {
      await this.db.channelMember.deleteMany({ where: key });
      return;
    }
    const exists = await this.db.channelMember.findUnique({ where: { workspaceId_channelId_userId: key } });
    if (!exists) {
      try {
        await this.db.channelMember.create({ data: key });
      } catch {
        // Written at the same moment by another replica that received the same event.
      }
    }
  }
}
