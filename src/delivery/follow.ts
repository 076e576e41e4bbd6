/**
 * Which threads cairn follows, the same for every platform. Once cairn was addressed in a thread
 * (or answered a top-level mention, which starts one), every message there is a turn without a new
 * mention.
 *
 * Kept in memory and derived from the database, so a restart or another replica still follows:
 * a thread is followed when its conversation is stored (cairn answered there) or when it grew from
 * one of cairn's own posts (a Slack thread under a reply or report, a Discord thread started from
 * one of its messages: the thread's id is that message's id, recorded as a delivery).
 */
import { RecentSet } from "../ground/cache/recent-set.ts";

export interface FollowLookup {
  /** A conversation is stored under this key. */
  conversationExists(key: string): Promise<boolean>;
  /** One of cairn's posts in this workspace has this platform id. */
  postedAs(platform: string, workspace: string, platformId: string): Promise<boolean>;
}

export interface ThreadRef {
  platform: string;
  workspace: string;
  threadId: string;
  /** The conversation key of the thread. */
  key: string;
}

export class ThreadFollowing {
  private readonly followed: RecentSet;
  /** Threads looked up and found not followed, briefly: an unaddressed chat costs one look-up a minute. */
  private readonly notFollowed: RecentSet;

  constructor(private readonly lookup: FollowLookup) {
    // Threads go quiet; a month bounds memory, and the database answers for older ones.
    this.followed = new RecentSet(30 * 24 * 60 * 60_000, 50_000);
    this.notFollowed = new RecentSet(60_000, 50_000);
  }

  follow(thread: ThreadRef): void {
    this.followed.add(thread.key);
    this.notFollowed.delete(thread.key);
  }

  /** Forgets a thread followed in memory only (cairn was refused there); a stored conversation still counts. */
  unfollow(thread: ThreadRef): void {
    this.followed.delete(thread.key);
  }

  async isFollowed(thread: ThreadRef): Promise<boolean> {
    if (this.followed.has(thread.key)) return true;
    if (this.notFollowed.has(thread.key)) return false;
    const found = (await this.lookup.conversationExists(thread.key)) || (await this.lookup.postedAs(thread.platform, thread.workspace, thread.threadId));
    if (found) this.followed.add(thread.key);
    else this.notFollowed.add(thread.key);
    return found;
  }
}
