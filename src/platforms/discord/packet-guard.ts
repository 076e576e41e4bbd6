/**
 * A guard around discord.js's handling of gateway events. discord.js builds its objects from each
 * payload without checking it (a message whose author is null, a bit field that is not a number)
 * inside an async event handler: one malformed event was an unhandled rejection, which ends a Node
 * process. Each event is handled on its own here; one that cannot be read is logged and skipped,
 * and the events after it are handled as usual.
 */
import type { Client } from "discord.js";
import type { Logger } from "../../ground/log.ts";
import { errText } from "../../ground/log.ts";

type HandlePacket = (packet: unknown, shard: unknown) => boolean;

export function guardPackets(client: Client, log: Logger): void {
  // Internal to discord.js 14 (WebSocketManager.handlePacket): the one place every dispatch goes through.
  const ws = client.ws as unknown as { handlePacket?: HandlePacket };
  const handle = ws.handlePacket;
  if (typeof handle !== "function") throw new Error("discord.js changed: WebSocketManager.handlePacket is gone; review src/platforms/discord/packet-guard.ts");
  ws.handlePacket = (packet, shard) => {
    try {
      return handle.call(ws, packet, shard);
    } catch (err) {
      const type = typeof packet === "object" && packet !== null ? (packet as { t?: unknown }).t : undefined;
      log.warn({ eventType: typeof type === "string" ? type : null, err: errText(err) }, "malformed Discord event ignored");
      return true;
    }
  };
}
