/**
 * Bolt acknowledges an Events API envelope before any listener runs, and Slack never delivers an
 * acknowledged envelope again: a process killed, or a database down, between that ack and storing
 * the message lost it for good. This receiver acknowledges each event once the app's listeners are
 * done with it, and cairn's message listeners are done once the message is kept in the inbound
 * journal on local disk and then stored, or a short while has passed (kept-messages.ts): never
 * later, whatever the database is doing, and never before the journal has it.
 *
 * An event a listener declined (the journal could not keep it) is not acknowledged: HTTP mode
 * answers 503 and Socket Mode leaves the envelope unacknowledged, so Slack delivers it again (to
 * this process or another). A redelivery of a kept message is dropped by its key.
 */
import type { App, Receiver, ReceiverEvent } from "@slack/bolt";
import type http from "node:http";
import type { Logger } from "../../../ground/log.ts";
import { errText } from "../../../ground/log.ts";

/** Events a listener declined: left unacknowledged, so Slack delivers them again. */
const declined = new WeakSet<object>();
export function declineAck(body: unknown): void {
  if (typeof body === "object" && body !== null) declined.add(body);
}

/** Thrown to the receiver for a declined event: its error handler (below) does not acknowledge it. */
export class NotAcknowledgedError extends Error {
  override name = "NotAcknowledgedError";
}

const isEventCallback = (body: unknown): boolean => typeof body === "object" && body !== null && (body as { type?: unknown }).type === "event_callback";

/** `onAck`: seconds from the event reaching the app to its acknowledgement. */
export function ackAfterListeners(inner: Receiver, log: Logger, onAck: (seconds: number) => void = () => {}): Receiver {
  return {
    // The receiver hands events to `app.processEvent`; it is given an app whose processEvent holds the ack.
    init: (app: App) => inner.init(holding(app)),
    start: (...args: unknown[]) => inner.start(...args),
    stop: (...args: unknown[]) => inner.stop(...args),
  };

  function holding(app: App): App {
    const processEvent = async (event: ReceiverEvent): Promise<void> => {
      if (!isEventCallback(event.body)) return answered(app, event);
      const arrived = performance.now();
      let failure: { err: unknown } | null = null;
      try {
        // Bolt's own early ack becomes a no-op; this one follows the listeners.
        await app.processEvent({ ...event, ack: async () => {} });
      } catch (err) {
        failure = { err };
      }
      if (declined.has(event.body as object)) throw new NotAcknowledgedError("the event was not kept; Slack delivers it again");
      // An event Bolt itself could not process (a malformed one) is acknowledged all the same: a
      // redelivery would fail alike. Its error goes on to the receiver's handler, after the ack.
      await event.ack();
      onAck((performance.now() - arrived) / 1000);
      if (failure) throw failure.err;
    };
    // Everything else of the app is its own; Bolt's receivers use only processEvent.
    return new Proxy(app, { get: (target, prop, receiver) => (prop === "processEvent" ? processEvent : Reflect.get(target, prop, receiver)) });
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
}

type HttpErrorArgs = { error: Error; logger: unknown; request: http.IncomingMessage; response: http.ServerResponse; storedResponse: unknown };

/** HTTP mode: a declined event is answered 503 (Slack retries it); anything else as Bolt would, 500. */
export function httpEventErrors(log: Logger): (args: HttpErrorArgs) => Promise<boolean> {
  return async ({ error, response }) => {
    const status = error instanceof NotAcknowledgedError ? 503 : 500;
    if (status === 500) log.warn({ err: errText(error), acknowledged: response.headersSent }, "a Slack event could not be processed");
    if (!response.headersSent) response.writeHead(status).end();
    // True: the request is answered, so Bolt's unanswered-request timer does not answer it again.
    return true;
  };
}

/** Socket Mode: a declined envelope stays unacknowledged, so Slack delivers it again. */
export function socketEventErrors(log: Logger): (args: { error: Error }) => Promise<boolean> {
  return async ({ error }) => {
    if (error instanceof NotAcknowledgedError) log.warn("a Slack event was not kept: left unacknowledged for Slack to deliver again");
    else log.warn({ err: errText(error) }, "a Slack event could not be processed");
    return false;
  };
}
