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
import type { PlatformAdapter } from "../ground/adapter.ts";
import { scopeOfWorkspace, type HistoryStore, type Workspace } from "../history/store/store.ts";
import type { Logger } from "../ground/log.ts";
import type { PersonScope } from "../ground/types.ts";
import type { ListenStore } from "./listen-store.ts";

export const DEFAULT_MEMBERS_TTL_MS = 10 * 60_000;

export class ChannelReaders {
  constructor(
    private readonly history: Pick<HistoryStore, "workspace" | "personIn">,
    private readonly listens: ListenStore,
    private readonly adapterFor: (platform: string) => PlatformAdapter | null,
    private readonly log: Logger,
    private readonly ttlMs = DEFAULT_MEMBERS_TTL_MS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The listened channels of the workspace whose knowledge this person can read now. */
  async readable(scope: PersonScope): Promise<string[]> {
    const channels = [...(await this.listens.listened(scope)).keys()];
    if (channels.length === 0) return [];
    const [workspace, person] = await Promise.all([this.history.workspace(scope), this.history.personIn(scope)]);
    if (!workspace || !person) return [];
    const adapter = this.adapterFor(workspace.platform);
    if (adapter?.canRead) return adapter.canRead(workspace.externalId, person.externalId, channels);
    if (adapter?.channelMembers) await this.refreshStale(workspace, adapter);
    return this.listens.memberOf(scope, person.externalId, channels);
  }

  /** Re-reads the members of every listened channel read longer than the TTL ago. */
  private async refreshStale(workspace: Workspace, adapter: PlatformAdapter): Promise<void> {
    const stale = new Date(this.now().getTime() - this.ttlMs);
    const due = [...(await this.listens.listened(scopeOfWorkspace(workspace))).values()].filter((l) => !l.membersAt || l.membersAt < stale);
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
    await this.listens.replaceMembers(scopeOfWorkspace(workspace), channel, members, this.now());
    return true;
  }

  /** A member event: someone joined or left a listened channel. */
  async member(workspace: Workspace, channel: string, user: string, joined: boolean): Promise<void> {
    const scope = scopeOfWorkspace(workspace);
    if (!(await this.listens.listened(scope)).has(channel)) return;
    await this.listens.setMember(scope, channel, user, joined);
  }
}
