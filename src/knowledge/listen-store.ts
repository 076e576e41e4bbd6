/**
 * Where cairn listens and who may read it: a workspace's listened channels (ChannelListen, with
 * each backfill's progress), the people who opted out (ListenExclusion) and the channels' member
 * lists (ChannelMember). What is kept of the channels is store.ts's.
 *
 * Listening and opt-outs are read on every channel event, so this process keeps them for a few
 * seconds (another replica's change shows within that); its own writes drop them at once.
 */
import type { Database, Db } from "../db/client.ts";
import type { ChannelListen } from "../db/generated/sqlite/client.ts";
import { workspaceScope } from "../db/scopes.ts";
import { bury } from "../erasure/tombstone-store.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";
import type { WorkspaceScope } from "../ground/types.ts";

export type { ChannelListen } from "../db/generated/sqlite/client.ts";

/** How long this process trusts what it read of listening and opt-outs. */
const STATE_TTL_MS = 5_000;

/** Who turned listening on from a command (the settings' channels have nobody). */
export interface Requester {
  /** The person's id, and their platform user id (told the backfill's progress). */
  personId: string;
  userId: string;
}

/** A backfill page kept: where the next one starts, how many were new, how far back it reached. */
export interface BackfillPage {
  cursor: string | null;
  kept: number;
  reachedAt: Date | null;
  done: boolean;
}

export class ListenStore {
  private readonly db: Db;
  private readonly listens = new TtlCache<string, Map<string, ChannelListen>>({ ttlMs: STATE_TTL_MS, max: 1_000 });
  private readonly exclusions = new TtlCache<string, Set<string>>({ ttlMs: STATE_TTL_MS, max: 1_000 });

  constructor(database: Database) {
    this.db = database.prisma;
  }

  /** The workspace's listened channels (any status), by channel id. */
  async listened(scope: WorkspaceScope): Promise<Map<string, ChannelListen>> {
    const { workspaceId } = scope;
    return this.listens.load(workspaceId, async () => new Map((await this.db.channelListen.findMany({ where: { workspaceId } })).map((l) => [l.channelId, l])));
  }

  /** Platform user ids of the workspace's people who opted out. */
  async excluded(scope: WorkspaceScope): Promise<Set<string>> {
    const { workspaceId } = scope;
    return this.exclusions.load(workspaceId, async () => new Set((await this.db.listenExclusion.findMany({ where: { workspaceId } })).map((e) => e.userId)));
  }

  /** After listening or opt-outs were written behind this store: read them again. */
  forgetCached(scope: WorkspaceScope): void {
    this.listens.delete(scope.workspaceId);
    this.exclusions.delete(scope.workspaceId);
  }

  /** A channel's listening, as stored now (not cached). */
  async listen(scope: WorkspaceScope, channelId: string): Promise<ChannelListen | null> {
    return this.db.channelListen.findUnique({ where: { workspaceId_channelId: { workspaceId: scope.workspaceId, channelId } } });
  }

  /**
   * Listening on from `at`, its backfill to run. From a command (`by`), the backfill starts afresh
   * and tells the requester; from the settings, only its status, start and cursor are reset.
   */
  async switchOn(scope: WorkspaceScope, channelId: string, at: Date, by: Requester | null): Promise<ChannelListen> {
    const { workspaceId } = scope;
    const fresh = by
      ? { status: "on", enabledAt: at, enabledById: by.personId, requestedBy: by.userId, backfill: "running", cursor: null, backfilled: 0, reachedAt: null }
      : { status: "on", enabledAt: at, backfill: "running", cursor: null };
    const create = by ? { workspaceId, channelId, ...fresh } : { workspaceId, channelId, status: "on", enabledAt: at, backfill: "running" };
    const listen = await this.db.channelListen.upsert({ where: { workspaceId_channelId: { workspaceId, channelId } }, create, update: fresh });
    this.forgetCached(scope);
    return listen;
  }

  /**
   * Listening off, by `byPersonId`. A tombstone records it: turned on again, the channel's backfill
   * reads new messages only, never what was said before it was turned off (backfill.ts).
   */
  async switchOff(scope: WorkspaceScope, channelId: string, byPersonId: string | null): Promise<void> {
    const { workspaceId } = scope;
    await this.db.$transaction(async (tx) => {
      await tx.channelListen.update({ where: { workspaceId_channelId: { workspaceId, channelId } }, data: { status: "off" } });
      await bury(tx, workspaceId, [{ kind: "listen_channel", channelKey: channelId, forgottenById: byPersonId }]);
    });
    this.forgetCached(scope);
  }

  /** cairn said in the channel what it keeps. */
  async markAnnounced(scope: WorkspaceScope, channelId: string, at: Date): Promise<void> {
    await this.db.channelListen.update({ where: { workspaceId_channelId: { workspaceId: scope.workspaceId, channelId } }, data: { announcedAt: at } });
  }

  /**
   * The listening a backfill job names (its payload holds the listen's id alone: jobs are not
   * kept per workspace), with its workspace's scope for what the job reads and writes next.
   */
  async ofBackfill(listenId: string): Promise<{ listen: ChannelListen; scope: WorkspaceScope } | null> {
    const listen = await this.db.channelListen.findUnique({ where: { id: listenId } });
    return listen && { listen, scope: workspaceScope({ id: listen.workspaceId }) };
  }

  /** Whether the listening is still on (a backfill stops once it is not). */
  async isOn(scope: WorkspaceScope, listenId: string): Promise<boolean> {
    const row = await this.db.channelListen.findFirst({ where: { id: listenId, workspaceId: scope.workspaceId }, select: { status: true } });
    return row?.status === "on";
  }

  /** Records a backfill page kept; the listening as it stands after it. */
  async recordPage(scope: WorkspaceScope, listenId: string, page: BackfillPage): Promise<ChannelListen> {
    return this.db.channelListen.update({
      where: { id: listenId, workspaceId: scope.workspaceId },
      data: { cursor: page.cursor, backfilled: { increment: page.kept }, reachedAt: page.reachedAt, backfill: page.done ? "done" : "running" },
    });
  }

  /**
   * Leaves a person's messages out of every listened channel of the workspace from now on. A
   * tombstone records it: what they said before is never read back, even after `include-me`.
   */
  async exclude(scope: WorkspaceScope, userId: string, personId: string): Promise<void> {
    const { workspaceId } = scope;
    await bury(this.db, workspaceId, [{ kind: "listen_person", personId, forgottenById: personId }]);
    const exists = await this.db.listenExclusion.findUnique({ where: { workspaceId_userId: { workspaceId, userId } } });
    if (!exists) await this.db.listenExclusion.create({ data: { workspaceId, userId } }).catch(() => undefined);
    this.forgetCached(scope);
  }

  /** Keeps a person's messages again. */
  async include(scope: WorkspaceScope, userId: string): Promise<void> {
    await this.db.listenExclusion.deleteMany({ where: { workspaceId: scope.workspaceId, userId } });
    this.forgetCached(scope);
  }

  async isExcluded(scope: WorkspaceScope, userId: string): Promise<boolean> {
    return (await this.db.listenExclusion.findUnique({ where: { workspaceId_userId: { workspaceId: scope.workspaceId, userId } } })) !== null;
  }

  /** How many members of the channel are stored. */
  async memberCount(scope: WorkspaceScope, channelId: string): Promise<number> {
    return this.db.channelMember.count({ where: { workspaceId: scope.workspaceId, channelId } });
  }

  /** Of these channels, those the stored member lists name this platform user in. */
  async memberOf(scope: WorkspaceScope, userId: string, channels: readonly string[]): Promise<string[]> {
    const rows = await this.db.channelMember.findMany({ where: { workspaceId: scope.workspaceId, userId, channelId: { in: [...channels] } }, select: { channelId: true } });
    return rows.map((r) => r.channelId);
  }

  /** A channel's members, read whole from the platform at `at`, in place of the old list (one transaction). */
  async replaceMembers(scope: WorkspaceScope, channelId: string, members: readonly string[], at: Date): Promise<void> {
    const { workspaceId } = scope;
    await this.db.$transaction(async (tx) => {
      await tx.channelMember.deleteMany({ where: { workspaceId, channelId } });
      if (members.length) await tx.channelMember.createMany({ data: [...new Set(members)].map((userId) => ({ workspaceId, channelId, userId })) });
      await tx.channelListen.updateMany({ where: { workspaceId, channelId }, data: { membersAt: at } });
    });
    this.forgetCached(scope);
  }

  /** A member event: someone joined or left the channel. */
  async setMember(scope: WorkspaceScope, channelId: string, userId: string, joined: boolean): Promise<void> {
    const key = { workspaceId: scope.workspaceId, channelId, userId };
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

  /** Workspaces with a listened channel (any status): retention runs through each. */
  async listeningWorkspaces(): Promise<WorkspaceScope[]> {
    const rows = await this.db.channelListen.findMany({ select: { workspaceId: true } });
    return [...new Set(rows.map((l) => l.workspaceId))].map((id) => workspaceScope({ id }));
  }
}
