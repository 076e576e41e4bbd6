/**
 * Who is looking at the Home tab, as the core's `Inbound`: the view and every command a click runs
 * are asked as this person, exactly as if they had typed `/cairn …` in their DM with cairn.
 *
 * The Home tab is no channel, so the person's DM with the app stands in for it (the core keys a
 * person's private things to DMs): `app_home_opened` names it, and a click (whose payload names no
 * channel) finds it again through `conversations.open`, cached, as Slack returns the same DM each time.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Inbound } from "../../../ground/types.ts";
import { TtlCache } from "../../../ground/cache/ttl-cache.ts";
import type { NameCache } from "../names.ts";

export interface HomeViewer {
  team: string;
  user: string;
}

/** The part of the WebClient this needs. */
export interface ConversationsOpenClient {
  conversations: { open(args: { users: string }): Promise<unknown> };
}

const OpenedSchema = z.looseObject({ channel: z.looseObject({ id: z.string().min(1) }) });

export class HomeViewers {
  private readonly dms = new TtlCache<string, string>({ ttlMs: 24 * 60 * 60_000, max: 10_000 });

  constructor(
    private readonly client: ConversationsOpenClient,
    private readonly names: NameCache,
  ) {}

  /** Remembers the DM a Home tab was opened from (`app_home_opened` names it). */
  knownDm(viewer: HomeViewer, channel: string): void {
    this.dms.set(key(viewer), channel);
  }

  async dm(viewer: HomeViewer): Promise<string> {
    const hit = this.dms.get(key(viewer));
    if (hit) return hit;
    const opened = OpenedSchema.parse(await this.client.conversations.open({ users: viewer.user }));
    this.dms.set(key(viewer), opened.channel.id);
    return opened.channel.id;
  }

  /**
   * The viewer as an inbound "message": `text` is the command line a click runs (or "home" for the
   * view itself), `trigger` the interaction's trigger_id (a fresh id when there is none).
   * `named: false` leaves the display name out: building a view is a read, and must not write the
   * name back (say, just after the person had cairn erase everything it held about them).
   */
  async inbound(viewer: HomeViewer, text: string, trigger?: string, opts: { named?: boolean } = {}): Promise<Inbound> {
    const named = opts.named !== false;
    const [channel, person] = await Promise.all([this.dm(viewer), named ? this.names.get(viewer.user) : Promise.resolve(null)]);
    return {
      platform: "slack",
      workspace: { externalId: viewer.team },
      author: { externalId: viewer.user, ...(person?.displayName ? { displayName: person.displayName } : {}) },
      channel: { externalId: channel, isDm: true },
      threadId: null,
      messageId: `home:${trigger ?? randomUUID()}`,
      text,
      sentAt: new Date(),
    };
  }
}

const key = (v: HomeViewer): string => `${v.team}:${v.user}`;
