/**
 * Channel knowledge, wired: what the core does with channel events, who turns listening on and off,
 * the backfill of a channel's history, and retention. The parts: store.ts (what is kept),
 * listen-store.ts (where cairn listens, opt-outs, member lists), members.ts (who may read it),
 * backfill.ts (the history job); the `/cairn listen` command is src/commands/listen.ts.
 */
import { LISTEN_CHANNEL } from "./listen-channel.ts";
import type { PlatformAdapter, Posted, PostTarget } from "../ground/adapter.ts";
import type { Platform } from "../ground/types.ts";
import { scopeOfWorkspace, type HistoryStore, type Workspace } from "../history/store/store.ts";
import type { JobQueue } from "../jobs/job-store.ts";
import type { Logger } from "../ground/log.ts";
import { ChannelReaders, DEFAULT_MEMBERS_TTL_MS } from "./members.ts";
import type { KnowledgeStore } from "./store.ts";
import type { ListenStore } from "./listen-store.ts";
import type { TombstoneStore } from "../erasure/tombstone-store.ts";
import type { ChannelEvent } from "../ground/channel-events.ts";
import { TtlCache } from "../ground/cache/ttl-cache.ts";

export interface KnowledgeSettings {
  /** How far back `listen on` reads a channel's history. */
  backfillDays: number;
  /** Kept messages older than this are removed (0: kept until deleted on the platform). */
  retentionDays: number;
  /** Channels listened in from start-up: `platform:workspace/channel`. */
  channels: readonly string[];
  /** How long a channel's member list is trusted before it is read again. */
  membersTtlMs: number;
}

export const DEFAULT_KNOWLEDGE: KnowledgeSettings = { backfillDays: 90, retentionDays: 0, channels: [], membersTtlMs: DEFAULT_MEMBERS_TTL_MS };

export const BACKFILL_JOB = "listen_backfill";
const RETENTION_EVERY_MS = 60 * 60_000;

export interface KnowledgeDeps {
  /** What is kept of listened channels. */
  store: KnowledgeStore;
  /** Where cairn listens, opt-outs, member lists. */
  listens: ListenStore;
  /** What was forgotten: people whose older messages a backfill skips, channels turned off before. */
  tombstones: Pick<TombstoneStore, "forgottenAuthors" | "channelTurnedOff">;
  history: HistoryStore;
  jobs: JobQueue;
  adapterFor: (platform: Platform) => PlatformAdapter | null;
  post: (platform: Platform, target: PostTarget, markdown: string) => Promise<Posted>;
  kick: () => void;
  settings: KnowledgeSettings;
  log: Logger;
  now: () => Date;
}

export class ChannelKnowledge {
  readonly store: KnowledgeStore;
  readonly listens: ListenStore;
  readonly readers: ChannelReaders;
  private retention: NodeJS.Timeout | null = null;
  private readonly workspaces = new TtlCache<string, Workspace>({ ttlMs: 10 * 60_000, max: 5_000 });

  constructor(readonly deps: KnowledgeDeps) {
    this.store = deps.store;
    this.listens = deps.listens;
    this.readers = new ChannelReaders(deps.history, deps.listens, (p) => deps.adapterFor(p as Platform), deps.log, deps.settings.membersTtlMs, deps.now);
  }

  get settings(): KnowledgeSettings {
    return this.deps.settings;
  }

  /** A channel event from an adapter: kept if its channel is listened in; never throws. */
  async observe(event: ChannelEvent): Promise<void> {
    try {
      await this.apply(event);
    } catch (err) {
      this.deps.log.error({ err, kind: event.kind }, "could not keep a channel event");
    }
  }

  private async apply(event: ChannelEvent): Promise<void> {
    const where = event.kind === "message" ? { platform: event.message.platform, workspace: event.message.workspace, channel: event.message.channel } : event;
    const workspace = await this.workspaceOf(where.platform, where.workspace.externalId);
    // No workspace yet: nobody turned listening on in it. Never created here: adapters send every
    // channel's events, and a workspace made by one would miss the name its first turn gives it.
    if (!workspace) return;
    const listens = await this.listens.listened(scopeOfWorkspace(workspace));
    if (!listens.has(where.channel)) return;
    switch (event.kind) {
      case "message":
        if (listens.get(where.channel)?.status === "on") await this.store.keep(workspace, where.channel, [event.message]);
        return;
      case "edit":
        await this.store.edit(workspace, event.channel, event.messageId, event.text);
        return;
      case "delete":
        await this.store.remove(workspace, event.channel, event.messageId);
        return;
      case "member":
        await this.readers.member(workspace, event.channel, event.user, event.joined);
        return;
    }
  }

  /** The workspace's row if it exists (kept once found: a workspace is never renamed away from its id). */
  private async workspaceOf(platform: string, externalId: string): Promise<Workspace | null> {
    const key = `${platform}:${externalId}`;
    const known = this.workspaces.get(key);
    if (known) return known;
    const found = await this.deps.history.findWorkspace(platform, externalId);
    if (found) this.workspaces.set(key, found);
    return found;
  }

  /** Queues the backfill of a listened channel (once per `listen on`: its key is the listen's start). */
  async queueBackfill(listenId: string, startedAt: Date): Promise<void> {
    await this.deps.jobs.enqueue(BACKFILL_JOB, { listenId }, { uniqueKey: `${BACKFILL_JOB}:${listenId}:${startedAt.toISOString()}`, maxAttempts: 1_000 });
    this.deps.kick();
  }

  /**
   * Start-up: the channels of the setting are listened in (without an announcement: an operator
   * chose them), and retention runs now and every hour.
   */
  async start(): Promise<void> {
    for (const spec of this.deps.settings.channels) {
      const m = LISTEN_CHANNEL.exec(spec);
      if (!m) continue;
      const workspace = await this.deps.history.workspaceOf(m[1]!, m[2]!);
      const scope = scopeOfWorkspace(workspace);
      const existing = await this.listens.listen(scope, m[3]!);
      if (existing?.status === "on") continue;
      const at = this.deps.now();
      const listen = await this.listens.switchOn(scope, m[3]!, at, null);
      await this.queueBackfill(listen.id, at);
      this.deps.log.info({ channel: spec }, "listening in a channel from the settings");
    }
    if (this.deps.settings.retentionDays > 0) {
      await this.purge();
      this.retention = setInterval(() => void this.purge(), RETENTION_EVERY_MS);
      this.retention.unref();
    }
  }

  stop(): void {
    if (this.retention) clearInterval(this.retention);
    this.retention = null;
  }

  /** Removes kept messages older than the retention; safe on several replicas at once. */
  async purge(): Promise<number> {
    const days = this.deps.settings.retentionDays;
    if (days <= 0) return 0;
    try {
      const removed = await this.store.purgeBefore(new Date(this.deps.now().getTime() - days * 24 * 60 * 60_000));
      if (removed) this.deps.log.info({ removed, days }, "channel knowledge past its retention removed");
      return removed;
    } catch (err) {
      this.deps.log.error({ err }, "channel knowledge retention failed; it runs again within the hour");
      return 0;
    }
  }
}
