/**
 * A Slack message event kept in the inbound journal before it is acknowledged (ack-once-kept.ts),
 * and handed back, live or after an outage or a restart, to the same handling (turn.ts). What is
 * kept is the event as Slack sent it, so a replay is a redelivery from local disk: the stored
 * message's key drops it if it was stored after all.
 */
import { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import type { KeptEvent, StoreOutcome } from "../../../ground/journal.ts";
import { JournalUnavailableError } from "../../../ground/journal.ts";
import { errText, type Logger } from "../../../ground/log.ts";
import { declineAck } from "./ack-once-kept.ts";

export const MESSAGE_EVENTS = ["message", "app_mention"] as const;
export type MessageEventType = (typeof MESSAGE_EVENTS)[number];

/** What is kept of one event: read back from disk after a restart, so checked again then. */
const KeptSchema = z.object({
  type: z.enum(MESSAGE_EVENTS),
  event: z.unknown(),
  body: z.unknown(),
  retryNum: z.number().int().optional(),
});
export type KeptMessage = z.infer<typeof KeptSchema>;

const KeySchema = z.looseObject({ event_id: z.string().min(1) });
const TeamSchema = z.looseObject({ team_id: z.string() });
const PostSchema = z.looseObject({ channel: z.string(), ts: z.string() });

/**
 * The event's identity: Slack's event id (the same in its retries; a post's `message` and
 * `app_mention` events have two), else its type, channel and ts.
 */
export function keptKey(type: MessageEventType, event: unknown, body: unknown): string {
  const id = KeySchema.safeParse(body);
  if (id.success) return id.data.event_id;
  const post = PostSchema.safeParse(event);
  return post.success ? `${type}:${post.data.channel}:${post.data.ts}` : `${type}:unkeyed:${crypto.randomUUID()}`;
}

/** Where the event's answers keep their order: its channel (a thread's messages are in it too). */
export function keptOrder(event: unknown, body: unknown): string | undefined {
  const post = PostSchema.safeParse(event);
  if (!post.success) return undefined;
  const team = TeamSchema.safeParse(body);
  return `${team.success ? team.data.team_id : ""}:${post.data.channel}`;
}

/**
 * Longest wait for a kept message to be stored before its event is acknowledged: past it (a slow
 * database, a burst) the journal is enough, a second inside Slack's 3 s. Until then the ack waits
 * for the store as well, because an unacknowledged event is what Slack gives to another replica
 * should this one die for good; with 1 s, a loaded three-replica run saw a post held unstored by
 * the killed replica answered, from Slack's second copy, after the one sent next.
 */
export const ACK_WAIT_MS = 2_000;

/**
 * Keeps the event, then returns (and the event is acknowledged) once its message is stored, or
 * `waitMs` after it arrived, whichever is first. The journal alone makes the acknowledgement safe
 * for this process's restart; waiting briefly for the store as well keeps it safe when this
 * replica never comes back (another replica gets a redelivery of what was not acknowledged, and
 * the store is milliseconds when the database is well). When the event cannot be kept, it is
 * declined: Slack delivers it again.
 */
export async function keepMessage(core: CorePort, log: Logger, kept: KeptMessage, waitMs = ACK_WAIT_MS): Promise<void> {
  const arrived = Date.now();
  let held;
  try {
    held = await core.journal.keep("slack", keptKey(kept.type, kept.event, kept.body), kept, keptOrder(kept.event, kept.body));
  } catch (err) {
    if (!(err instanceof JournalUnavailableError)) throw err;
    log.error({ err: errText(err) }, "could not keep a Slack event in the journal: not acknowledged, Slack delivers it again");
    declineAck(kept.body);
    return;
  }
  const left = arrived + waitMs - Date.now();
  if (!held || left <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([held.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
  clearTimeout(timer);
}

/** The handler the journal hands kept events to; `handle` settles nothing itself but through `kept`. */
export function keptHandler(log: Logger, handle: (message: KeptMessage, kept: (outcome: StoreOutcome) => void, held: boolean) => Promise<void>): (event: KeptEvent, settle: (outcome: StoreOutcome) => void) => void {
  return (event, settle) => {
    const parsed = KeptSchema.safeParse(event.payload);
    if (!parsed.success) {
      log.warn({ key: event.key, problem: parsed.error.issues[0]?.message }, "a kept Slack event could not be read; dropped");
      return settle("not_stored");
    }
    // Whatever the handling did not settle (a bot's message, a /learn mention) never will be stored.
    handle(parsed.data, settle, event.held).then(
      () => settle("not_stored"),
      (err: unknown) => {
        log.error({ err: errText(err), key: event.key }, "handling a kept Slack event failed");
        settle("failed");
      },
    );
  };
}
