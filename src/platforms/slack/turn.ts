/**
 * One Slack message event to the core: parse and classify it, name its author, and hand it to the
 * core's delivery path with the place its answer goes. What is answered, dedupe, thread following,
 * drafts and deliveries are the core's; this file only logs what became of the post.
 */
import type { CorePort } from "../../ground/adapter.ts";
import { classifyMessage, toInbound } from "./events.ts";
import { messageTarget, type MessageTargetDeps } from "./replies/target.ts";
import { learnFromMention, mentionCommand } from "./commands/learn-mention.ts";
import type { KeyedQueue } from "../../ground/keyed-queue.ts";
import type { StoreOutcome } from "../../ground/journal.ts";

export interface TurnDeps extends MessageTargetDeps {
  core: CorePort;
  /**
   * A conversation's events reach the core in the order they arrived: the author's name is looked
   * up first (a Web API call for someone new), and a quick follow-up by a known person must not
   * overtake a first message that waits on that look-up.
   */
  order: KeyedQueue;
}

export interface EventMeta {
  eventType: string;
  eventId?: string | undefined;
  retryNum?: number | undefined;
  /** The event is kept in the inbound journal: told what became of its message (ReceiveOptions.kept). */
  kept?: (outcome: StoreOutcome) => void;
  /** Its conversation waits for storage: marked as waiting, not stored now (ReceiveOptions.held). */
  held?: boolean;
}

export async function onMessageEvent(deps: TurnDeps, event: unknown, body: unknown, meta: EventMeta): Promise<void> {
  const c = classifyMessage(event, body, deps.bot);
  if (c.kind === "drop") {
    const { kind: _kind, ...fields } = { ...meta, ...c };
    if (c.reason === "malformed") deps.log.warn(fields, "malformed message event ignored");
    else deps.log.debug(fields, "message dropped");
    return;
  }
  const m = c.message;
  const log = deps.log.child({ team: m.teamId, channel: m.channel, ts: m.ts, ...(m.threadId ? { thread: m.threadId } : {}) });
  // Entering the core fixes the message's place in its conversation: done in arrival order.
  const entered = await deps.order.run(`${m.teamId}:${m.channel}:${m.threadId ?? ""}`, async () => {
    const person = await deps.names.get(m.user);
    const inbound = {
      ...toInbound(m, person, deps.bot),
      // A bot user posting without bot_id (some integrations do) is still never a turn.
      ...(person.isBot ? { author: { externalId: m.user, isBot: true } } : {}),
      addressed: c.kind !== "thread_reply",
    };
    const command = c.kind === "mention" ? mentionCommand(m.text) : null;
    if (command) return { learn: learnFromMention(deps, inbound, m, log, command) };
    return { received: deps.core.receive(inbound, messageTarget(deps, m, log), meta.kept ? { kept: meta.kept, held: meta.held === true } : {}) };
  });
  if ("learn" in entered) {
    await entered.learn;
    return;
  }
  const received = await entered.received;
  switch (received.kind) {
    case "dropped":
      if (received.reason === "duplicate") log.debug({ ...meta }, "duplicate delivery dropped");
      else log.debug({ ...meta, reason: received.reason }, "message dropped");
      return;
    case "silent":
      log.info({ reason: "refused" }, "not answering an unaddressed reply from someone cairn may not serve");
      return;
    case "replied":
      log.info({ reply: received.replyMessageId, parts: received.posted.length, status: received.status, failed: received.failed }, "reply posted");
  }
}
