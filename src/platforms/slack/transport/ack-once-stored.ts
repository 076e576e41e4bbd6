/**
 * Bolt acknowledges an Events API envelope before any listener runs, and Slack never delivers an
 * acknowledged envelope again: a process killed between that ack and storing the message lost it
 * for good (the cluster test saw 6 to 10 of 250 posts go that way). This receiver holds each event's
 * ack until the app's listeners are done with it (cairn's message listener resolves once the message
 * is stored, `ReceiveOptions.onStored`), and at most `holdMs`, under Slack's 3 s retry deadline. An
 * envelope never acknowledged (a crash before storing) is delivered again by Slack, to whichever
 * connection it picks; a redelivery of a stored message is a duplicate, dropped by its stored key.
 */
import type { App, Receiver, ReceiverEvent } from "@slack/bolt";
import type { Logger } from "../../../ground/log.ts";
import { errText } from "../../../ground/log.ts";

/** Under Slack's 3 s: a slow store costs a redelivery (dropped as a duplicate), never a loss. */
export const ACK_HOLD_MS = 2_500;

/**
 * Events whose listener declined them (the adapter is stopping): left unacknowledged, so Slack
 * delivers them again, to a replica that is not stopping (or to this one after its restart).
 */
const declined = new WeakSet<object>();
export function declineAck(body: unknown): void {
  if (typeof body === "object" && body !== null) declined.add(body);
}

const isEventCallback = (body: unknown): boolean => typeof body === "object" && body !== null && (body as { type?: unknown }).type === "event_callback";

export function ackAfterListeners(inner: Receiver, log: Logger, holdMs = ACK_HOLD_MS): Receiver {
  return {
    // The receiver hands events to `app.processEvent`; it is given an app whose processEvent holds the ack.
    init: (app: App) => inner.init(holding(app)),
    start: (...args: unknown[]) => inner.start(...args),
    stop: (...args: unknown[]) => inner.stop(...args),
  };

  function holding(app: App): App {
    const processEvent = async (event: ReceiverEvent): Promise<void> => {
      if (!isEventCallback(event.body)) return answered(app, event);
      let acked = false;
      const ack = async (): Promise<void> => {
        if (acked) return;
        acked = true;
        await event.ack();
      };
      const timer = setTimeout(() => void ack().catch((err: unknown) => log.warn({ err: errText(err) }, "could not acknowledge a Slack event")), holdMs);
      try {
        // Bolt's own early ack becomes a no-op; this one follows the listeners.
        await app.processEvent({ ...event, ack: async () => {} });
      } finally {
        clearTimeout(timer);
        if (!declined.has(event.body as object)) await ack();
      }
    };
    // Everything else of the app is its own; Bolt's receivers use only processEvent.
    return new Proxy(app, { get: (target, prop, receiver) => (prop === "processEvent" ? processEvent : Reflect.get(target, prop, receiver)) });
  }
}

/**
 * A command or interaction no listener took (an action, shortcut or view cairn does not know, or a
 * payload too broken to match one) is acknowledged with nothing once the listeners are done, so
 * Slack shows the person no error and an HTTP request is not held 3 s and then answered 404.
 * cairn's own listeners acknowledge first thing, so this never answers for them.
 */
async function answered(app: App, event: ReceiverEvent): Promise<void> {
  let acked = false;
  const ack: ReceiverEvent["ack"] = async (response) => {
    acked = true;
    await event.ack(response);
  };
  try {
    await app.processEvent({ ...event, ack });
  } finally {
    if (!acked) await event.ack();
  }
}
