/**
 * A guard in front of the Socket Mode client's message handling. The client reads
 * `payload.event.type` of every `events_api` envelope without checking it is there, in an async
 * handler nobody awaits: one envelope without an event was an unhandled rejection, which ends a
 * Node process, and Slack delivers an unacknowledged envelope again, to any replica (a crash loop).
 * Such an envelope is handed on with a placeholder event instead, so it is acknowledged through the
 * usual path (and logged here); anything else the handler throws is logged, never left unhandled.
 */
import type { SocketModeClient } from "@slack/socket-mode";
import { z } from "zod";
import type { Logger } from "../../../ground/log.ts";
import { errText } from "../../../ground/log.ts";

/** The event type a malformed envelope is handed on as: no listener of cairn's acts on it. */
export const MALFORMED_EVENT_TYPE = "cairn_malformed_envelope";

const Envelope = z.object({ type: z.string(), envelope_id: z.string().optional(), payload: z.unknown() });
const EventsPayload = z.looseObject({ event: z.looseObject({ type: z.string() }) });

type Handler = (data: string | ArrayBuffer, isBinary: boolean) => Promise<void>;

/**
 * The envelope as the client may read it: unchanged when well-formed (or not JSON at all, which
 * the client itself ignores), else with its payload's event replaced by a placeholder.
 */
export function repairEnvelope(text: string): { text: string; problem: string | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { text, problem: null };
  }
  const envelope = Envelope.safeParse(parsed);
  if (!envelope.success) return { text, problem: null };
  if (envelope.data.type !== "events_api") return { text, problem: null };
  const payload = EventsPayload.safeParse(envelope.data.payload);
  if (payload.success) return { text, problem: null };
  const base = typeof envelope.data.payload === "object" && envelope.data.payload !== null && !Array.isArray(envelope.data.payload) ? envelope.data.payload : {};
  const repaired = { ...envelope.data, payload: { ...base, type: "event_callback", event: { type: MALFORMED_EVENT_TYPE } } };
  return { text: JSON.stringify(repaired), problem: payload.error.issues.map((i) => `${i.path.join(".") || "payload"}: ${i.message}`).join("; ") };
}

export function guardSocketMessages(client: SocketModeClient, log: Logger): void {
  // The client registers its handler for "ws_message" once, in its constructor.
  const handler = (client as unknown as { onWebSocketMessage: Handler }).onWebSocketMessage;
  if (typeof handler !== "function") throw new Error("@slack/socket-mode changed: SocketModeClient.onWebSocketMessage is gone; review src/platforms/slack/transport/socket-guard.ts");
  client.removeAllListeners("ws_message");
  client.on("ws_message", (data: string | ArrayBuffer, isBinary: boolean) => {
    let message = data;
    if (!isBinary) {
      const { text, problem } = repairEnvelope(typeof data === "string" ? data : new TextDecoder().decode(data));
      if (problem) log.warn({ problem }, "malformed Socket Mode envelope acknowledged and ignored");
      message = text;
    }
    handler.call(client, message, isBinary).catch((err: unknown) => log.error({ err: errText(err) }, "Socket Mode message handling failed"));
  });
}
