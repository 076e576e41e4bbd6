/**
 * Which channel threads cairn follows. After it is mentioned in a thread (or answers a top-level
 * mention, which starts one), every reply there is a turn without a new mention.
 *
 * Followed threads are kept in memory and derived from the database: a conversation stored for the
 * thread means cairn answered there before, so a restart or another replica still follows it.
 */
import { conversationKey } from "../../history/store.ts";
import { RecentSet } from "./recent.ts";

/** True when a conversation with this key is stored (see `conversationKey`). */
export type ConversationLookup = (key: string) => Promise<boolean>;

/** The core's conversation key of a Slack channel thread, built by the core's own function. */
export function threadConversationKey(teamId: string, channel: string, threadTs: string): string {
  return conversationKey({
    platform: "slack",
    workspace: { externalId: teamId },
    author: { externalId: "" },
    channel: { externalId: channel, isDm: false },
    threadId: threadTs,
    messageId: "",
    text: "",
    sentAt: new Date(0),
  });
}

export class ThreadTracker {
  private readonly followed: RecentSet;

  constructor(
    private readonly lookup: ConversationLookup | null,
    opts: { ttlMs?: number; max?: number } = {},
  ) {
    // Threads go quiet; a month bounds memory, and the database answers for older ones.
    this.followed = new RecentSet(opts.ttlMs ?? 30 * 24 * 60 * 60_000, opts.max ?? 50_000);
  }

  follow(key: string): void {
    this.followed.add(key);
  }

  /** Forgets a thread in memory (cairn was refused there); a stored conversation still counts. */
  unfollow(key: string): void {
    this.followed.delete(key);
  }

  async isFollowed(key: string): Promise<boolean> {
    if (this.followed.has(key)) return true;
    if (!this.lookup || !(await this.lookup(key))) return false;
    this.followed.add(key);
    return true;
  }
}
