/**
 * Reactions on cairn's messages, as they arrive: only reactions on its own replies and posts count
 * (found through the deliveries it recorded, in the reactor's workspace); each distinct event is
 * queued durably (job kind "feedback") for the learning loop, once. A ✅ confirms at once the team
 * entries waiting for the reactor that the message concerns.
 */
import type { Logger } from "../ground/log.ts";
import type { FeedbackEvent, FeedbackResult, PersonScope } from "../ground/types.ts";
import { scopeOfDelivery, scopeOfPerson, scopeOfWorkspace, type HistoryStore } from "../history/store/store.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { JobQueue } from "../jobs/job-store.ts";
import { checkAccess, type AccessPolicy } from "../admission/access.ts";
import { EmojiSignals } from "./emoji.ts";

export interface ReactionDeps {
  history: HistoryStore;
  memory: MemoryStore;
  jobs: JobQueue;
  access: AccessPolicy;
  /** Wakes the job worker. */
  kick: () => void;
  log: Logger;
}

export class Reactions {
  constructor(private readonly deps: ReactionDeps) {}

  async feedback(event: FeedbackEvent): Promise<FeedbackResult> {
    const { history, jobs, log } = this.deps;
    if (event.reactor.isBot) return { kind: "ignored", reason: "bot" };
    const workspace = await history.findWorkspace(event.platform, event.workspace.externalId);
    const inWorkspace = workspace && scopeOfWorkspace(workspace);
    const delivery = inWorkspace && (await history.findDelivery(inWorkspace, event.channel.externalId, event.targetMessageId));
    if (!workspace || !inWorkspace || !delivery) return { kind: "ignored", reason: "not_a_reply" };
    // Someone cairn may not serve teaches it nothing.
    if (!checkAccess(this.deps.access, { platform: event.platform, author: event.reactor, channel: event.channel }).ok) return { kind: "ignored", reason: "refused" };
    const reactor = await history.person(inWorkspace, event.reactor);
    const payload = {
      replyMessageId: delivery.messageId,
      conversationId: delivery.conversationId,
      workspaceId: workspace.id,
      reactorId: reactor.id,
      emoji: event.emoji,
      ...(event.signal ? { signal: event.signal } : {}),
      action: event.action,
      at: event.at.toISOString(),
    };
    const uniqueKey = `feedback:${delivery.id}:${reactor.id}:${event.emoji}:${event.action}:${payload.at}`;
    const { job, created } = await jobs.enqueue("feedback", payload, { uniqueKey });
    if (!created) return { kind: "ignored", reason: "duplicate" };
    this.deps.kick();
    log.info({ reply: delivery.messageId, emoji: event.emoji, action: event.action }, "feedback recorded");
    if (event.action === "added" && EmojiSignals.isApproval(event.emoji)) await this.confirm(scopeOfPerson(reactor), delivery);
    return { kind: "recorded", replyMessageId: delivery.messageId, jobId: job.id };
  }

  /**
   * ✅ on a reply confirms the team entries that the reactor proposed in the message it answers; on
   * a post of cairn's (a review's notice), the entries waiting for them that it announced.
   * The delivery, found in the reactor's workspace, names the reply's conversation.
   */
  private async confirm(reactor: PersonScope, delivery: { conversationId: string; workspaceId: string; messageId: number }): Promise<void> {
    const { history, memory } = this.deps;
    const reply = await history.findMessage(scopeOfDelivery(delivery), delivery.messageId);
    if (!reply) return;
    const pending = reply.replyToId ? await memory.pendingBy(reactor, reply.replyToId) : await memory.pendingAnnounced(reactor, reply.id);
    if (pending.length === 0) return;
    try {
      await memory.confirm(reactor, pending.map((e) => e.id), { source: "reaction", actorId: reactor.personId, sourceMessageId: reply.replyToId ?? reply.id, reason: "confirmed with a reaction" });
    } catch (err) {
      this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, "confirmation by reaction refused");
    }
  }
}
