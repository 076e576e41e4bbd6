/**
 * The delivery path during a storage outage (delivery.ts): what a person sees of a message that
 * could not be stored.
 * - Kept in the journal: it is answered once storage is back (the journal hands it in again), its
 *   working mark stays meanwhile, and its conversation is told so once per outage, not once per
 *   message. The first message stored after it ends the outage (the next one is told again).
 * - Not kept (nothing holds it): the person is told it was not saved.
 */
import { errText, type Logger } from "../ground/log.ts";
import type { Received, ReplySurface, ReplyTarget } from "../ground/adapter.ts";
import type { NotStoredError } from "../ground/errors.ts";
import type { StoreOutcome } from "../ground/journal.ts";
import { NOT_SAVED_REPLY, STORAGE_DOWN_NOTICE } from "../ground/replies.ts";

export class StorageOutage {
  /** Conversations told, during this outage, that cairn answers once storage is back. */
  private readonly told = new Set<string>();
  /** Working marks put on messages waiting for storage, by post: taken off when their turn ends. */
  private readonly marks = new Map<string, () => Promise<void>>();

  /** A message was stored: storage answers, so the next outage gets its notice again. */
  over(): void {
    this.told.clear();
  }

  /**
   * Storage failed before the message (`post`, in `conversation`) was stored. `stored` tells the
   * journal (failed: handed back later); `forget` lets the delivery path take its redelivery.
   */
  async notStored(
    m: { post: string; conversation: string; kept: boolean },
    turn: { surface: ReplySurface; target: ReplyTarget },
    stored: (outcome: StoreOutcome) => void,
    forget: () => void,
    err: NotStoredError,
    log: Logger,
  ): Promise<Received> {
    log.warn({ err: errText(err.cause), kept: m.kept }, m.kept ? "storage failed: the message waits in the journal" : "storage failed: the message is lost and its author told so");
    if (!m.kept) {
      stored("not_stored");
      const shown = await turn.surface.finish(NOT_SAVED_REPLY, "notice");
      return { kind: "replied", status: "failed", replyMessageId: null, ...shown };
    }
    stored("failed");
    forget();
    // Marked now (it never got as far as being accepted), until the turn that answers it ends.
    if (!this.marks.has(m.post) && turn.target.working) {
      const unmark = await turn.target.working().catch(() => null);
      if (unmark) this.marks.set(m.post, unmark);
    }
    if (this.told.has(m.conversation)) {
      await turn.surface.cancel();
      return { kind: "dropped", reason: "waiting_for_storage" };
    }
    this.told.add(m.conversation);
    const shown = await turn.surface.finish(STORAGE_DOWN_NOTICE, "notice");
    return { kind: "replied", status: "failed", replyMessageId: null, ...shown };
  }

  /** The turn of `post` ended (answered, or dropped): the mark put on it while it waited comes off. */
  async ended(post: string, log: Logger): Promise<void> {
    const unmark = this.marks.get(post);
    if (!unmark) return;
    this.marks.delete(post);
    await unmark().catch((err: unknown) => log.debug({ err: errText(err) }, "could not clear the working mark"));
  }
}
