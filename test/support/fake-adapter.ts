/**
 * The smallest platform adapter that takes replies and the core's own posts: everything sent is
 * kept in order, with the channel it went to and the platform id it got. No edits, no drafts:
 * each reply is one send of its final text.
 */
import type { Capabilities, CorePort, PlatformAdapter, PostTarget, ReplyTarget } from "../../src/ground/adapter.ts";
import type { Platform } from "../../src/ground/types.ts";

export interface Sent {
  channel: string;
  text: string;
  id: string;
}

export class FakeAdapter implements PlatformAdapter {
  readonly capabilities: Capabilities = {
    ephemeral: false,
    maxMessageLength: 40_000,
    maxMessageLines: Number.POSITIVE_INFINITY,
    minEditIntervalMs: 0,
  };
  readonly sent: Sent[] = [];
  private ids = 0;

  constructor(readonly platform: Platform = "slack") {}

  render(markdown: string): string {
    return markdown;
  }

  async start(_core: CorePort): Promise<void> {}

  async stop(): Promise<void> {}

  async open(target: PostTarget): Promise<ReplyTarget> {
    return this.target(target.kind === "dm" ? `D-${target.person}` : target.channel);
  }

  /** Where a reply in `channelId` goes; `beforeSend` runs as a part is about to be posted. */
  target(channelId: string, beforeSend?: (text: string) => Promise<void>): ReplyTarget {
    return {
      channelId,
      send: async (text) => {
        await beforeSend?.(text);
        const id = `${this.platform}-post-${++this.ids}`;
        this.sent.push({ channel: channelId, text, id });
        return id;
      },
    };
  }
}
