/**
 * Discord's gateway never delivers an event again, so a message is kept in the inbound journal as
 * it arrives: when storage is down, or the process is killed, the journal hands it back later.
 * What is kept is where the message is (channel and id); the live message is handed on from
 * memory, and one kept by an earlier process is read again over REST (deleted since: dropped).
 */
import { DiscordAPIError, type Client, type Message } from "discord.js";
import { z } from "zod";
import type { CorePort } from "../../ground/adapter.ts";
import type { KeptEvent, StoreOutcome } from "../../ground/journal.ts";
import { errText, type Logger } from "../../ground/log.ts";

const KeptSchema = z.object({ channelId: z.string().min(1), messageId: z.string().min(1) });

/** Discord's codes for a message or channel that is gone, or not visible to cairn any more. */
const GONE = new Set([10003, 10008, 50001]);

export type HandleMessage = (message: Message, kept?: (outcome: StoreOutcome) => void, held?: boolean) => Promise<void>;

export class KeptMessages {
  /** Messages kept by this process and not yet handed on: no need to read them again. */
  private readonly live = new Map<string, Message>();

  constructor(
    private readonly core: CorePort,
    private readonly client: Client,
    private readonly handle: HandleMessage,
    private readonly log: Logger,
  ) {
    core.journal.handleWith("discord", (event, settle) => void this.replay(event, settle));
  }

  /** A message from the gateway: kept, then handled through the journal; handled directly when it cannot be kept. */
  async receive(message: Message): Promise<void> {
    let kept;
    try {
      if (!this.live.has(message.id)) this.live.set(message.id, message);
      kept = await this.core.journal.keep("discord", message.id, { channelId: message.channelId, messageId: message.id }, message.channelId);
    } catch (err) {
      this.live.delete(message.id);
      this.log.error({ err: errText(err), message: message.id }, "could not keep a Discord message in the journal; handling it without");
      await this.handle(message);
      return;
    }
    // The gateway replayed a message still in hand (after a resume): the core drops it by its key.
    if (!kept) await this.handle(message);
  }

  private async replay(event: KeptEvent, settle: (outcome: StoreOutcome) => void): Promise<void> {
    const parsed = KeptSchema.safeParse(event.payload);
    if (!parsed.success) {
      this.log.warn({ key: event.key }, "a kept Discord message could not be read; dropped");
      return settle("not_stored");
    }
    const { channelId, messageId } = parsed.data;
    let message = this.live.get(messageId) ?? null;
    this.live.delete(messageId);
    try {
      message ??= await this.fetch(channelId, messageId);
      if (!message) return settle("not_stored");
      await this.handle(message, settle, event.held);
      settle("not_stored");
    } catch (err) {
      this.log.warn({ err: errText(err), message: messageId }, "a kept Discord message could not be handled; kept for later");
      // Kept in memory again, so a retry does not need REST.
      if (message) this.live.set(messageId, message);
      settle("failed");
    }
  }

  /** The message as Discord has it now; null when it is gone. */
  private async fetch(channelId: string, messageId: string): Promise<Message | null> {
    try {
      const channel = await this.client.channels.fetch(channelId);
      if (!channel || !("messages" in channel)) return null;
      return await channel.messages.fetch(messageId);
    } catch (err) {
      if (err instanceof DiscordAPIError && typeof err.code === "number" && GONE.has(err.code)) return null;
      throw err;
    }
  }
}
