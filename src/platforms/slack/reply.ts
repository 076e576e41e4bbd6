/**
 * Posting one answer: a status placeholder while tools run (updated with `chat.update`, at most
 * once per interval), then the answer in mrkdwn chunks. The first chunk replaces the placeholder,
 * so the thread does not keep a stale "working" line; the rest follow as new thread messages.
 */
import type { Logger } from "../../log.ts";
import { chunkMrkdwn, SLACK_CHUNK_LIMIT } from "./chunk.ts";
import { postMessage, updateMessage, type SlackClient } from "./client.ts";
import { slackErrorCode } from "./errors.ts";
import { escapeText, toMrkdwn } from "./mrkdwn.ts";

export interface ReplyTarget {
  channel: string;
  /** Undefined posts at the top level (a DM outside a thread). */
  threadTs: string | undefined;
}

export interface ReplyOptions {
  /** Least time between two status edits: Slack allows about one chat.update per second per channel. */
  minUpdateMs: number;
  chunkLimit?: number;
}

export const APOLOGY = "Sorry, I couldn't post my answer here because Slack returned an error. Your message is saved; please try again in a moment.";

export class ReplyWriter {
  private placeholder: string | null = null;
  private chain: Promise<void> = Promise.resolve();
  private pending: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastShown = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly client: SlackClient,
    private readonly target: ReplyTarget,
    private readonly log: Logger,
    private readonly opts: ReplyOptions,
  ) {}

  /** For `TurnHooks.onProgress`: synchronous, coalescing; only the latest status is shown. */
  readonly progress = (status: string): void => {
    if (this.closed) return;
    this.pending = status;
    if (this.timer) return;
    const wait = Math.max(0, this.lastShown + this.opts.minUpdateMs - Date.now());
    this.timer = setTimeout(() => this.showPending(), wait);
  };

  /** Stops status updates; those already sent finish first. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }

  /** Posts the answer; returns the ts of every part posted, in order. Never throws. */
  async finish(markdown: string): Promise<{ posted: string[]; failed: boolean }> {
    await this.close();
    const chunks = chunkMrkdwn(toMrkdwn(markdown), this.opts.chunkLimit ?? SLACK_CHUNK_LIMIT);
    if (!chunks.length) chunks.push("…");
    const posted: string[] = [];
    for (const [i, chunk] of chunks.entries()) {
      try {
        posted.push(i === 0 && this.placeholder ? await this.replacePlaceholder(this.placeholder, chunk) : await this.post(chunk));
      } catch (err) {
        this.log.error({ ...this.where(), method: "chat.postMessage", part: i + 1, parts: chunks.length, error: slackErrorCode(err) }, "could not post the reply");
        await this.apologise();
        return { posted, failed: true };
      }
    }
    return { posted, failed: false };
  }

  /** A short apology in the thread, where Slack still lets us post. */
  async apologise(text = APOLOGY): Promise<void> {
    await this.close();
    try {
      if (this.placeholder) await updateMessage(this.client, this.target.channel, this.placeholder, text);
      else await this.post(text);
    } catch (err) {
      this.log.error({ ...this.where(), error: slackErrorCode(err) }, "could not post the apology either");
    }
  }

  private showPending(): void {
    this.timer = null;
    const status = this.pending;
    this.pending = null;
    if (this.closed || status === null) return;
    this.lastShown = Date.now();
    const text = `:hourglass_flowing_sand: _${escapeText(status)}…_`;
    this.chain = this.chain.then(async () => {
      try {
        if (this.placeholder === null) this.placeholder = await this.post(text);
        else await updateMessage(this.client, this.target.channel, this.placeholder, text);
      } catch (err) {
        // A status line is a courtesy: the answer still goes out without it.
        this.log.warn({ ...this.where(), error: slackErrorCode(err) }, "could not show the working status");
      }
    });
  }

  private async replacePlaceholder(ts: string, text: string): Promise<string> {
    try {
      await updateMessage(this.client, this.target.channel, ts, text);
      return ts;
    } catch (err) {
      this.log.warn({ ...this.where(), placeholder: ts, error: slackErrorCode(err) }, "could not replace the status message; posting the answer anew");
      return this.post(text);
    }
  }

  private post(text: string): Promise<string> {
    return postMessage(this.client, this.target.channel, text, this.target.threadTs);
  }

  private where(): Record<string, string> {
    return { channel: this.target.channel, ...(this.target.threadTs ? { thread: this.target.threadTs } : {}) };
  }
}
