/**
 * Which threads cairn is in, so it can answer there without being mentioned.
 *
 * A thread is followed once cairn was addressed in it (recorded at once, before the answer, so a
 * quick follow-up is not missed), or — after a restart, when memory is empty — when Discord shows
 * that cairn posted there or that the thread was started from one of its messages (such a thread
 * has the starting message's id). That lookup costs up to two REST calls, once per thread per
 * process; both answers are remembered, in bounded maps, so a busy guild cannot grow them forever.
 */
import type { Message } from "discord.js";
import type { Logger } from "../../log.ts";

const MAX_REMEMBERED = 5_000;
/** How far back the restart lookup reads a thread's history for one of cairn's messages. */
const HISTORY_LOOKUP = 50;

class BoundedSet {
  private readonly items = new Map<string, true>();
  constructor(private readonly max: number) {}
  has(key: string): boolean {
    return this.items.has(key);
  }
  add(key: string): void {
    this.items.delete(key);
    this.items.set(key, true);
    if (this.items.size > this.max) {
      const oldest = this.items.keys().next().value;
      if (oldest !== undefined) this.items.delete(oldest);
    }
  }
  delete(key: string): void {
    this.items.delete(key);
  }
}

export class ThreadFollower {
  private readonly followed = new BoundedSet(MAX_REMEMBERED);
  private readonly notFollowed = new BoundedSet(MAX_REMEMBERED);

  constructor(
    private readonly botId: () => string,
    private readonly log: Logger,
  ) {}

  follow(threadId: string): void {
    this.followed.add(threadId);
    this.notFollowed.delete(threadId);
  }

  async isFollowed(message: Message): Promise<boolean> {
    const thread = message.channel;
    if (!thread.isThread()) return false;
    if (this.followed.has(thread.id)) return true;
    if (this.notFollowed.has(thread.id)) return false;
    try {
      const found = await this.lookup(message);
      if (found) this.follow(thread.id);
      else this.notFollowed.add(thread.id);
      return found;
    } catch (err) {
      // Not remembered: a transient failure (rate limit, outage) must not mute cairn in this thread.
      this.log.warn({ err: err instanceof Error ? err.message : String(err), thread: thread.id }, "could not check whether cairn is in this thread");
      return false;
    }
  }

  private async lookup(message: Message): Promise<boolean> {
    const thread = message.channel;
    if (!thread.isThread()) return false;
    const me = this.botId();
    const recent = await thread.messages.fetch({ limit: HISTORY_LOOKUP, before: message.id });
    if (recent.some((m) => m.author.id === me)) return true;
    const parent = thread.parent;
    const cachedStarter = parent && "messages" in parent ? parent.messages.cache.get(thread.id) : undefined;
    if (cachedStarter) return cachedStarter.author.id === me;
    const starter = await thread.fetchStarterMessage().catch(() => null);
    return starter?.author.id === me;
  }
}
