/**
 * Posting one answer, with a working message so nobody stares at an empty thread.
 *
 * While the turn runs, one message shows either the latest tool status or the answer as the model
 * writes it (a draft, rendered as mrkdwn; a draft longer than a message spills into further thread
 * messages, split as the final answer will be). Edits are coalesced: at most one flush per
 * `minUpdateMs`, never two of the writer's Slack calls in flight, and each flush shows only the
 * newest state, so a fast model cannot outrun Slack's rate limits. A draft first appears
 * `minUpdateMs` after its first text: a short answer finished by then is posted once, without an
 * edit a moment later.
 *
 * At the end the final answer replaces the working messages part by part (a part that already
 * shows the right text is left alone), further parts are posted, and working messages it does not
 * need (a long draft cut short by an apology) are deleted, so the thread keeps no stale text.
 */
import type { Logger } from "../../log.ts";
import { chunkMrkdwn, SLACK_CHUNK_LIMIT } from "./chunk.ts";
import { deleteMessage, postMessage, updateMessage, type SlackClient } from "./client.ts";
import { slackErrorCode } from "./errors.ts";
import { escapeText, toMrkdwn } from "./mrkdwn.ts";

export interface ReplyTarget {
  channel: string;
  /** Undefined posts at the top level (a DM outside a thread). */
  threadTs: string | undefined;
}

export interface ReplyOptions {
  /**
   * Least time between two flushes of the working message (status or draft), and how long a draft
   * waits before it is first shown: Slack allows about one message edit per second per channel.
   */
  minUpdateMs: number;
  chunkLimit?: number;
}

export const APOLOGY = "Sorry, I couldn't post my answer here because Slack returned an error. Your message is saved; please try again in a moment.";

/** A message this writer posted, and the text it shows now (to skip edits that change nothing). */
interface Shown {
  ts: string;
  text: string;
}

/** What the next flush shows: the latest tool status, or the draft as it is by then. */
type View = { kind: "status"; status: string } | { kind: "draft" };

export const statusLine = (status: string): string => `:hourglass_flowing_sand: _${escapeText(status)}…_`;

export class ReplyWriter {
  /** The working messages posted so far, in thread order. */
  private readonly shown: Shown[] = [];
  /** Working messages deleted because the final answer did not need them. */
  private readonly deleted = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private view: View | null = null;
  /** The answer's Markdown so far, since the last reset. */
  private draft = "";
  private draftSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A flush's Slack calls are running; the next flush waits for them. */
  private busy = false;
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
    this.view = { kind: "status", status };
    this.schedule();
  };

  /** For `TurnHooks.onText`: appends to the draft; synchronous, coalescing like `progress`. */
  readonly text = (delta: string): void => {
    if (this.closed || !delta) return;
    this.draftSince ??= Date.now();
    this.draft += delta;
    this.view = { kind: "draft" };
    this.schedule();
  };

  /**
   * For `TurnHooks.onTextReset`: the draft was a preamble to tool calls. It is dropped, but stays on
   * screen until the tool status that follows replaces it: blanking it first would only flicker.
   */
  readonly resetText = (): void => {
    this.draft = "";
    this.draftSince = null;
    if (this.view?.kind === "draft") this.view = null;
  };

  /** Stops status and draft updates; those already sent finish first. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }

  /**
   * Posts the answer over the working messages; returns the ts of every message that carries the
   * reply, in order (working messages that could not be deleted included). Never throws.
   */
  async finish(markdown: string): Promise<{ posted: string[]; failed: boolean }> {
    await this.close();
    const chunks = chunkMrkdwn(toMrkdwn(markdown), this.opts.chunkLimit ?? SLACK_CHUNK_LIMIT);
    if (!chunks.length) chunks.push("…");
    const posted: string[] = [];
    for (const [i, chunk] of chunks.entries()) {
      const working = this.shown[i];
      try {
        posted.push(working ? await this.replace(working, chunk) : await this.post(chunk));
      } catch (err) {
        this.log.error({ ...this.where(), method: "chat.postMessage", part: i + 1, parts: chunks.length, error: slackErrorCode(err) }, "could not post the reply");
        await this.apologise();
        return { posted: posted.filter((ts) => !this.deleted.has(ts)), failed: true };
      }
    }
    posted.push(...(await this.discard(this.shown.slice(chunks.length))));
    return { posted, failed: false };
  }

  /** A short apology in the thread, where Slack still lets us post, over the working messages. */
  async apologise(text = APOLOGY): Promise<void> {
    await this.close();
    const [first, ...rest] = this.shown;
    try {
      if (first) await updateMessage(this.client, this.target.channel, first.ts, text);
      else await this.post(text);
    } catch (err) {
      this.log.error({ ...this.where(), error: slackErrorCode(err) }, "could not post the apology either");
    }
    await this.discard(rest);
  }

  private schedule(): void {
    if (this.closed || this.timer || this.busy) return;
    let at = this.lastShown + this.opts.minUpdateMs;
    if (this.view?.kind === "draft" && this.draftSince !== null) at = Math.max(at, this.draftSince + this.opts.minUpdateMs);
    this.timer = setTimeout(() => this.flush(), Math.max(0, at - Date.now()));
  }

  private flush(): void {
    this.timer = null;
    const view = this.view;
    this.view = null;
    if (this.closed || view === null) return;
    // Rendered now, not when the text arrived: whatever came in meanwhile is shown in this one edit.
    // toMrkdwn closes a code fence the draft has not closed yet, and the split keeps every part
    // balanced, so a half-written code block never swallows the rest of the message.
    const parts = view.kind === "status" ? [statusLine(view.status)] : chunkMrkdwn(toMrkdwn(this.draft), this.opts.chunkLimit ?? SLACK_CHUNK_LIMIT);
    if (!parts.length) return;
    this.lastShown = Date.now();
    this.busy = true;
    this.chain = this.chain
      .then(() => this.show(parts))
      .finally(() => {
        this.busy = false;
        if (this.view) this.schedule();
      });
  }

  /** Brings the working messages to `parts`: edits the ones that changed, posts the new ones. */
  private async show(parts: readonly string[]): Promise<void> {
    try {
      for (const [i, text] of parts.entries()) {
        const working = this.shown[i];
        if (!working) {
          this.shown.push({ ts: await this.post(text), text });
        } else if (working.text !== text) {
          await updateMessage(this.client, this.target.channel, working.ts, text);
          working.text = text;
        }
      }
    } catch (err) {
      // A status line or draft is a courtesy: the answer still goes out without it.
      this.log.warn({ ...this.where(), error: slackErrorCode(err) }, "could not show the working status");
    }
  }

  private async replace(working: Shown, text: string): Promise<string> {
    if (working.text === text) return working.ts;
    try {
      await updateMessage(this.client, this.target.channel, working.ts, text);
      working.text = text;
      return working.ts;
    } catch (err) {
      this.log.warn({ ...this.where(), placeholder: working.ts, error: slackErrorCode(err) }, "could not replace the status message; posting the answer anew");
      return this.post(text);
    }
  }

  /** Deletes working messages the answer does not need; returns those that stay (delete refused). */
  private async discard(extra: readonly Shown[]): Promise<string[]> {
    const kept: string[] = [];
    for (const working of extra) {
      try {
        await deleteMessage(this.client, this.target.channel, working.ts);
        this.deleted.add(working.ts);
      } catch (err) {
        this.log.warn({ ...this.where(), ts: working.ts, error: slackErrorCode(err) }, "could not delete a working message");
        kept.push(working.ts);
      }
    }
    return kept;
  }

  private post(text: string): Promise<string> {
    return postMessage(this.client, this.target.channel, text, this.target.threadTs);
  }

  private where(): Record<string, string> {
    return { channel: this.target.channel, ...(this.target.threadTs ? { thread: this.target.threadTs } : {}) };
  }
}
