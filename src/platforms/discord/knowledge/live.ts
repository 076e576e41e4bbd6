/**
 * Live channel knowledge: every guild message, edit and deletion the gateway delivers, handed to
 * the core as a `ChannelEvent` (`core.observe`); the core keeps those of channels it listens in.
 *
 * - Beside turns, never in their way: the adapter reads the raw dispatch (discord.js's `raw` event)
 *   while its message handler decides on turns as before, so a message that is also a turn is kept
 *   too, and observing never delays, changes or fails a turn. Failures are logged, not thrown.
 * - DMs are never sent (no guild id): cairn never listens in them.
 * - Thread messages, edits and deletions go to the thread's parent channel (place.ts);
 *   private threads are left out.
 * - Order: the events of one channel reach the core in arrival order, so an edit or a deletion
 *   never overtakes the message it is about (it would find nothing to change). Different channels
 *   go side by side, a few at a time.
 * - Covered by the GuildMessages intent (create, update, delete, bulk delete in guilds) and
 *   MessageContent (the text of messages and their edits), which the adapter already asks for.
 */
import type { z } from "zod";
import type { CorePort } from "../../../ground/adapter.ts";
import { KeyedQueue } from "../../../ground/keyed-queue.ts";
import type { ChannelEvent } from "../../../ground/channel-events.ts";
import { errText, type Logger } from "../../../ground/log.ts";
import { channelMessage, isConversation, readableText, type Names } from "./message.ts";
import type { ChannelPlace } from "./place.ts";
import { WireDispatch, WireMessage, WireMessageDelete, WireMessageDeleteBulk, WireMessageUpdate } from "./wire.ts";

/** Channels whose events are handed over at once; the rest wait their turn (a busy guild, a purge). */
const PARALLEL_CHANNELS = 4;

export interface LiveKnowledgeDeps {
  core: Pick<CorePort, "observe">;
  log: Logger;
  /** Where a channel id sits (a thread's parent); null: never kept (a private thread). */
  place: (channelId: string) => Promise<ChannelPlace | null>;
  names: Names;
}

/** A dispatch read: the channel it happened in, and its events once that channel's place is known. */
interface Observed {
  guild: string;
  channelId: string;
  events: (place: ChannelPlace & { guild: string }) => ChannelEvent[];
}

export class LiveKnowledge {
  private readonly order = new KeyedQueue(PARALLEL_CHANNELS);

  constructor(private readonly deps: LiveKnowledgeDeps) {}

  /**
   * The work a raw gateway dispatch asks of channel knowledge, or null when it asks none. Cheap and
   * synchronous: the caller runs the work without waiting on it.
   */
  fromDispatch(packet: unknown): (() => Promise<void>) | null {
    const dispatch = WireDispatch.safeParse(packet);
    if (!dispatch.success || !dispatch.data.t) return null;
    const observed = this.read(dispatch.data.t, dispatch.data.d);
    if (!observed) return null;
    return () => this.order.run(observed.channelId, () => this.send(observed));
  }

  private read(t: string, d: unknown): Observed | null {
    const { names } = this.deps;
    switch (t) {
      case "MESSAGE_CREATE": {
        const m = this.parse(t, WireMessage, d);
        if (!m?.guild_id) return null;
        return {
          guild: m.guild_id,
          channelId: m.channel_id,
          events: (place) => {
            const message = channelMessage(m, place, names);
            return message ? [{ kind: "message", message }] : [];
          },
        };
      }
      case "MESSAGE_UPDATE": {
        const m = this.parse(t, WireMessageUpdate, d);
        // No text (an embed unfurled), or a bot's edit (cairn's own drafts): nothing kept changes.
        if (!m?.guild_id || m.content === undefined || m.author?.bot === true || m.webhook_id !== undefined) return null;
        if (typeof m["type"] === "number" && !isConversation(m["type"])) return null;
        const text = readableText(m.content, m.mentions, names);
        return { guild: m.guild_id, channelId: m.channel_id, events: (p) => [{ kind: "edit", ...where(p), messageId: m.id, text }] };
      }
      case "MESSAGE_DELETE": {
        const m = this.parse(t, WireMessageDelete, d);
        if (!m?.guild_id) return null;
        return { guild: m.guild_id, channelId: m.channel_id, events: (p) => [{ kind: "delete", ...where(p), messageId: m.id }] };
      }
      case "MESSAGE_DELETE_BULK": {
        const m = this.parse(t, WireMessageDeleteBulk, d);
        if (!m?.guild_id) return null;
        return { guild: m.guild_id, channelId: m.channel_id, events: (p) => m.ids.map((id): ChannelEvent => ({ kind: "delete", ...where(p), messageId: id })) };
      }
      default:
        return null;
    }
  }

  private parse<S extends z.ZodType>(t: string, schema: S, d: unknown): z.infer<S> | null {
    const parsed = schema.safeParse(d);
    if (parsed.success) return parsed.data;
    this.deps.log.debug({ t, issues: parsed.error.issues.slice(0, 3) }, "discord dispatch not understood; not kept");
    return null;
  }

  private async send(observed: Observed): Promise<void> {
    const { core, log, place } = this.deps;
    try {
      const at = await place(observed.channelId);
      if (!at) return;
      for (const event of observed.events({ ...at, guild: observed.guild })) await core.observe(event);
    } catch (err) {
      log.warn({ err: errText(err), channel: observed.channelId }, "could not hand a channel event to the core");
    }
  }
}

const where = (p: ChannelPlace & { guild: string }) => ({ platform: "discord" as const, workspace: { externalId: p.guild }, channel: p.channel });
