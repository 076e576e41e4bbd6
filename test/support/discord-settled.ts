/**
 * Waiting on the real discord.js client instead of sleeping: a test triggers a dispatch on the fake
 * Discord, waits until the client has received it (its raw event), then until the adapter has
 * finished every handler the dispatch started. What has not happened by then does not happen.
 */
import type { Client } from "discord.js";
import type { DiscordAdapter } from "../../src/platforms/discord/adapter.ts";

/** A gateway dispatch's data (`d`). */
export type DispatchData = Record<string, unknown>;

/** Resolves when `client` has received a dispatch of type `t` matching `pick`; register before triggering it. */
export function received(client: Client, t: string, pick: (d: DispatchData) => boolean, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("raw", listener);
      reject(new Error(`timed out after ${timeoutMs}ms waiting for the client to receive ${t}`));
    }, timeoutMs);
    const listener = (packet: { t?: string; d?: DispatchData }) => {
      if (packet.t === t && packet.d && pick(packet.d)) {
        clearTimeout(timer);
        client.off("raw", listener);
        resolve();
      }
    };
    client.on("raw", listener);
  });
}

/**
 * Runs `send`, then waits until each of `adapters` got the dispatch `t` it caused (`pick` knows it
 * by what `send` returned) and every handler it started there is done; returns what `send` returned.
 */
export async function settledOn<T>(adapters: readonly DiscordAdapter[], t: string, pick: (d: DispatchData, sent: T) => boolean, send: () => T): Promise<T> {
  const box: { sent?: T } = {};
  const got = Promise.all(adapters.map((a) => received(a.client, t, (d) => "sent" in box && pick(d, box.sent as T))));
  box.sent = send();
  await got;
  await Promise.all(adapters.map((a) => a.idle()));
  return box.sent;
}
