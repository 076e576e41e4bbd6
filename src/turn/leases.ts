/**
 * Turn leases: which process is answering a person's message, or posting a reply, so that a
 * process that dies mid-turn leaves work another process can finish, and no live process's work is
 * taken from it.
 *
 * Invariants kept here:
 * - A person's message is stored already leased to the process that stored it (one write, no
 *   separate claim), and stays leased until its reply is posted (recording the delivery ends it)
 *   or given up. A leased message is a turn in flight; an expired lease is a dead (or stopped)
 *   process's turn. The reply is stored only while the lease holds (history/store/store.ts).
 * - Leases are renewed, all in one statement, every third of their length while this process has
 *   turns in flight, so they can be short and a killed replica's conversations resume soon after.
 * - Stopping hands everything still held back at once (the lease ends now), and leases given out
 *   after that are born expired: another process takes over without waiting.
 * - A lease of a process of this machine that no longer runs (lease-owner.ts) is ended at once
 *   (`expireDead`): a kill -9 and a restart resume the turns without waiting out the lease.
 * The statements are lease-store.ts's; this class keeps who owns what, and for how long.
 */
import type { Lease } from "../history/store/store.ts";
import type { ConversationScope } from "../ground/types.ts";
import type { Ahead, LeaseStore } from "./lease-store.ts";
import type { Logger } from "../ground/log.ts";
import { errText } from "../ground/log.ts";
import { deadHere, machineKey, newOwner } from "./lease-owner.ts";

export interface LeaseSettings {
  /** How long a lease lasts unrenewed: the longest a dead process's turns wait for another. */
  leaseMs: number;
}

export const DEFAULT_LEASES: LeaseSettings = { leaseMs: 20_000 };

export type { Ahead } from "./lease-store.ts";

export class TurnLeases {
  /** This machine, as lease owners name it. */
  private readonly machine = machineKey();
  /** This process, as lease owner: machine, pid and a random part (pids repeat across restarts). */
  readonly owner = newOwner(this.machine);
  private timer: NodeJS.Timeout | null = null;
  private isReleased = false;

  constructor(
    private readonly store: LeaseStore,
    readonly settings: LeaseSettings,
    private readonly busy: () => boolean,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Stopping: what this process stores now is handed back at once. */
  get released(): boolean {
    return this.isReleased;
  }

  /** The lease a row written now is stored under. */
  next(): Lease {
    return { owner: this.owner, until: this.isReleased ? new Date(0) : new Date(this.now().getTime() + this.settings.leaseMs) };
  }

  /** Renews this process's leases while it has turns in flight. */
  start(): void {
    if (this.timer) return;
    this.isReleased = false;
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.settings.leaseMs / 3)));
    this.timer.unref();
  }

  async renew(): Promise<number> {
    if (this.isReleased || !this.busy()) return 0;
    try {
      return await this.store.extendAll(this.owner, new Date(this.now().getTime() + this.settings.leaseMs));
    } catch (err) {
      // A missed renewal is retried at the next tick; leases are three ticks long.
      this.log.warn({ err: errText(err) }, "could not renew turn leases");
      return 0;
    }
  }

  /** Stops renewing and hands back everything this process still holds: the leases end now. */
  async release(): Promise<number> {
    this.isReleased = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const count = await this.store.extendAll(this.owner, new Date(0));
    if (count) this.log.info({ rows: count }, "turns in flight handed back through their leases");
    return count;
  }

  /**
   * Work of other processes that must come before the turn of message `m`: the conversation's
   * person messages sent earlier (by the platform's time; the id breaks ties) whose turns are not
   * over, answered and posted. Empty in a single process (its own earlier turns are ahead of this
   * one in its queue). Ordered by platform time, not by id: two replicas store two quick messages
   * in whatever order their event loops allow.
   */
  async ahead(scope: ConversationScope, m: { id: number; createdAt: Date }): Promise<Ahead[]> {
    return this.store.ahead(scope, this.owner, m);
  }

  /**
   * Ends the leases of processes of this machine that are gone, so their turns are taken over now.
   * Reads only leased rows (indexed on leaseOwner): the turns in flight.
   */
  async expireDead(): Promise<number> {
    const now = this.now();
    let ended = 0;
    for (const owner of await this.store.liveOwners(now)) {
      if (!this.ownerGone(owner)) continue;
      const count = await this.store.expireOwner(owner, now);
      if (count) this.log.info({ owner, rows: count }, "turns of a process of this machine that no longer runs taken over without waiting for their leases");
      ended += count;
    }
    return ended;
  }

  /** Whether a lease's owner is a process of this machine that is gone. */
  ownerGone(owner: string): boolean {
    return owner !== this.owner && deadHere(owner, this.machine);
  }

  isExpired(a: Pick<Ahead, "until">): boolean {
    return a.until.getTime() <= this.now().getTime();
  }

  /** Conversations with expired leases (a dead process's turns), oldest first: their scopes and keys. */
  async expiredConversations(platforms: readonly string[], limit = 50): Promise<{ scope: ConversationScope; key: string }[]> {
    if (platforms.length === 0) return [];
    return this.store.expiredConversations(platforms, this.now(), limit);
  }

  /**
   * Takes over expired leases of one conversation (`only`: just these rows); the rows now this
   * process's, in the order their messages were sent. Row by row and conditional, so of two
   * processes racing for a row exactly one gets it.
   */
  async claimExpired(scope: ConversationScope, only?: readonly number[]): Promise<number[]> {
    const wanted = only && new Set(only);
    const expired = (await this.store.expired(scope, this.now())).filter((id) => !wanted || wanted.has(id));
    const claimed: number[] = [];
    for (const id of expired) {
      if (await this.store.take(scope, id, this.next(), this.now())) claimed.push(id);
    }
    return claimed;
  }

  /** Ends a row's lease without a delivery (a reply that could not be posted, a message given up on). */
  async end(id: number): Promise<void> {
    await this.store.end(id, this.owner);
  }
}
